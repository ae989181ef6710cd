#!/usr/bin/env python3
"""Rewrites a CUDA source so that a C++ compiler accepts it, for the emulated build (-DRT_CUDA=EMULATED).

    python3 translate_launches.py IN.cu OUT.cpp

Four constructs are rewritten; everything else compiles as C++ with cuda_emulator/device.h:

    kernel<T, 4><<<grid, block, shared, stream>>>(a, b);
 -> ::rt::cuda_emulator::launch("kernel<T, 4>", ::rt::cuda_emulator::config(grid, block, shared, stream),
        ::rt::cuda_emulator::kernel_key(kernel<T, 4>), [&](auto&... a) { kernel<T, 4>(a...); }, a, b);

The kernel's address (nullptr when the launch asks for no dynamic shared memory) is what
cudaFuncSetAttribute's limit is looked up by; the generic lambda calls the kernel in each thread.

    __shared__ float partial[32], total;
 -> struct rt_shared_site_1 {}; auto& partial = ::rt::cuda_emulator::static_shared<float[32], rt_shared_site_1>();
    struct rt_shared_site_2 {}; auto& total = ::rt::cuda_emulator::static_shared<float, rt_shared_site_2>();

    __global__ void __launch_bounds__(256) k(float* p) {
 -> __global__ void k(float* p) { ::rt::cuda_emulator::check_launch_bounds(256);

    extern __shared__ __align__(16) unsigned char buffer[];
 -> unsigned char* buffer = static_cast<unsigned char*>(::rt::cuda_emulator::dynamic_shared_memory());

Line breaks are kept, and a #line directive names the original file, so the compiler's messages
point into IN. A launch whose kernel expression or argument list cannot be delimited is an error
naming the line, never passed through.
"""
import re
import sys

IDENTIFIER = re.compile(r"[A-Za-z0-9_:]")
EXTERN_SHARED = re.compile(
    r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?(?P<type>[A-Za-z_][\w:<>, ]*?)\s+(?P<name>\w+)\s*\[\s*\]\s*;")


# `__shared__ [__align__(n)] TYPE declarators;` where each declarator is `name` or `name[dim]...`.
SHARED = re.compile(
    r"__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?(?P<type>[A-Za-z_][\w:<>]*(?:\s+[A-Za-z_][\w:<>]*)*?)\s+"
    r"(?P<declarators>\w+\s*(?:\[[^\]]*\]\s*)*(?:,\s*\w+\s*(?:\[[^\]]*\]\s*)*)*);")
DECLARATOR = re.compile(r"(\w+)\s*((?:\[[^\]]*\]\s*)*)")


class TranslationError(Exception):
    pass


def line_of(text, index):
    return text.count("\n", 0, index) + 1


def kernel_start(text, end):
    """Start of the kernel expression that ends just before `end` (an identifier, maybe template arguments)."""
    i = end
    while i > 0 and text[i - 1].isspace():
        i -= 1
    if i > 0 and text[i - 1] == ">":  # template arguments: walk back to the matching '<'
        depth = 0
        while i > 0:
            i -= 1
            if text[i] == ")":  # a parenthesised argument may hold comparisons: skip it whole
                parens = 1
                while i > 0 and parens:
                    i -= 1
                    parens += {")": 1, "(": -1}.get(text[i], 0)
            elif text[i] == ">":
                depth += 1
            elif text[i] == "<":
                depth -= 1
                if depth == 0:
                    break
        if depth != 0:
            raise TranslationError("unbalanced template arguments before <<<")
        while i > 0 and text[i - 1].isspace():
            i -= 1
    start = i
    while start > 0 and IDENTIFIER.match(text[start - 1]):
        start -= 1
    if start == i:
        raise TranslationError("no kernel name before <<<")
    return start


def arguments_end(text, open_paren):
    """Index just past the ')' that closes the '(' at open_paren."""
    depth = 0
    for i in range(open_paren, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise TranslationError("unbalanced parentheses in the launch's arguments")


def top_level_items(text):
    """text split at the commas outside parentheses, brackets and braces."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return items


def asks_shared_memory(config):
    """Whether a launch configuration names dynamic shared memory (a third item other than 0)."""
    items = top_level_items(config)
    return len(items) >= 3 and items[2] not in ("0", "0u", "0U")


def translate_launches(text):
    out = []
    pos = 0
    while True:
        open_config = text.find("<<<", pos)
        if open_config < 0:
            out.append(text[pos:])
            return "".join(out)
        try:
            # Comments that show a launch (`// kernel<<<...>>>(...)`) stay as they are.
            if in_comment(text, open_config):
                out.append(text[pos:open_config + 3])
                pos = open_config + 3
                continue
            close_config = text.find(">>>", open_config)
            if close_config < 0:
                raise TranslationError("<<< without >>>")
            start = kernel_start(text, open_config)
            kernel = text[start:open_config].rstrip()
            open_paren = close_config + 3
            while open_paren < len(text) and text[open_paren].isspace():
                open_paren += 1
            if open_paren >= len(text) or text[open_paren] != "(":
                raise TranslationError("no argument list after >>>")
            end = arguments_end(text, open_paren)
        except TranslationError as e:
            raise TranslationError(f"line {line_of(text, open_config)}: {e}") from None
        config = text[open_config + 3:close_config]
        arguments = text[open_paren + 1:end - 1]
        name = " ".join(kernel.split()).replace('"', '\\"')
        key = f"::rt::cuda_emulator::kernel_key({kernel})" if asks_shared_memory(config) else "nullptr"
        head = f'::rt::cuda_emulator::launch("{name}", ::rt::cuda_emulator::config({config}), {key}, ' \
               f"[&](auto&... a) {{ {kernel}(a...); }}"
        tail = f", {arguments})" if arguments.strip() else ")"
        # Keep the original's line count, so that later lines keep their numbers.
        missing = text.count("\n", start, end) - head.count("\n") - tail.count("\n")
        out.append(text[pos:start])
        out.append(head + "\n" * missing + tail)
        pos = end


def translate_extern_shared(text):
    def replace(m):
        t, name = m.group("type").strip(), m.group("name")
        return f"{t}* {name} = static_cast<{t}*>(::rt::cuda_emulator::dynamic_shared_memory());"

    return EXTERN_SHARED.sub(replace, text)


def in_comment(text, index):
    """Whether `index` is in a // comment or a string literal of its line (how sources mention constructs)."""
    before = text[text.rfind("\n", 0, index) + 1:index]
    return "//" in before or before.replace('\\"', "").count('"') % 2 == 1


def translate_shared(text):
    """`__shared__ T a[N];` -> `struct rt_shared_site_1 {}; auto& a = static_shared<T[N], rt_shared_site_1>();`."""
    out, pos, site = [], 0, 0
    for m in re.finditer(r"__shared__", text):
        if m.start() < pos or in_comment(text, m.start()):
            continue
        d = SHARED.match(text, m.start())
        if not d:
            raise TranslationError(f"line {line_of(text, m.start())}: a __shared__ declaration this translation "
                                   "does not know (expected `__shared__ TYPE name[dims], ...;`)")
        line_start = text.rfind("\n", 0, m.start()) + 1
        if re.search(r"\bstatic\s+$", text[line_start:m.start()]):
            raise TranslationError(f"line {line_of(text, m.start())}: `static __shared__` (one variable for all "
                                   "blocks) is not translated; declare it `__shared__` inside the kernel")
        declarations = []
        for name, dims in DECLARATOR.findall(d.group("declarators")):
            site += 1
            declarations.append(f"struct rt_shared_site_{site} {{}}; auto& {name} = "
                                f"::rt::cuda_emulator::static_shared<{d.group('type')}"
                                f"{' '.join(dims.split())}, rt_shared_site_{site}>();")
        out.append(text[pos:m.start()])
        out.append(" ".join(declarations) + "\n" * text.count("\n", m.start(), d.end()))
        pos = d.end()
    out.append(text[pos:])
    return "".join(out)


def translate_launch_bounds(text):
    """`__launch_bounds__(N, ...) kernel(params) {` -> `kernel(params) { check_launch_bounds(N);`."""
    out, pos = [], 0
    for m in re.finditer(r"__launch_bounds__\s*\(", text):
        if m.start() < pos or in_comment(text, m.start()):
            continue
        try:
            close = arguments_end(text, m.end() - 1)
            max_threads = top_level_items(text[m.end():close - 1])[0]
            params = text.find("(", close)
            if params < 0:
                raise TranslationError("no parameter list after __launch_bounds__")
            body = arguments_end(text, params)
            while body < len(text) and text[body].isspace():
                body += 1
            if body >= len(text) or text[body] != "{":
                raise TranslationError("no kernel body after __launch_bounds__")
        except TranslationError as e:
            raise TranslationError(f"line {line_of(text, m.start())}: {e}") from None
        out.append(text[pos:m.start()])
        out.append("\n" * text.count("\n", m.start(), close))  # keep the line count
        out.append(text[close:body + 1])
        out.append(f" ::rt::cuda_emulator::check_launch_bounds({max_threads});")
        pos = body + 1
    out.append(text[pos:])
    return "".join(out)


def translate(text, path):
    text = translate_launch_bounds(translate_shared(translate_extern_shared(text)))
    return f'#line 1 "{path}"\n' + translate_launches(text)


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: translate_launches.py IN.cu OUT.cpp")
    source, target = argv[1], argv[2]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    try:
        result = translate(text, source)
    except TranslationError as e:
        sys.exit(f"{source}:{e}")
    with open(target, "w", encoding="utf-8") as f:
        f.write(result)


if __name__ == "__main__":
    main(sys.argv)
