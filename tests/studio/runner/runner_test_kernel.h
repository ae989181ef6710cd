// tests/studio/runner/runner_test_kernel.h — the one PythonKernel of a runner test process.
//
// CPython initialises once per process, so tests share test_kernel(); ctest runs each TEST_CASE in its own
// process (catch_discover_tests), and each test starts from a fresh namespace anyway (restart).
#pragma once
#include "kernel/python_kernel.h"
#include "notebook/notebook.h"
#include "runner/notebook_runner.h"

#include <filesystem>
#include <string>
#include <vector>

namespace rt::studio::test {

// Created on first use (output echoed, so the test report still reaches the terminal); restarted (fresh namespace) on every call after the first.
PythonKernel& fresh_test_kernel();
void shut_down_test_kernel();

// A notebook of code cells with these sources (a markdown cell first, so indices are offset by one).
Notebook notebook_of(const std::vector<std::string>& code_sources);

// RunOptions with allow_errors (every cell runs, as `--allow-errors`).
RunOptions allowing_errors();

std::string read_text(const std::filesystem::path& path);
// Runs tests/studio/notebook/nbformat_check.py on `path`; returns its output, "" when the file passes.
std::string nbformat_problems(const std::filesystem::path& path);

}  // namespace rt::studio::test
