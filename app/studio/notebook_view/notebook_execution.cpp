#include "notebook_execution.h"

#include "runner/cell_output_builder.h"

#include <QRegularExpression>

namespace rt::studio {

namespace {

ExecutionQueue::Clock::time_point now() { return ExecutionQueue::Clock::now(); }

}  // namespace

int tracebackLineInCell(const std::vector<std::string>& traceback, const std::string& label) {
  static const QRegularExpression frame(QStringLiteral("File \"<cell ([^>]*)>\", line (\\d+)"));
  int line = 0;
  for (const std::string& entry : traceback) {
    auto matches = frame.globalMatch(QString::fromStdString(entry));
    while (matches.hasNext()) {
      const QRegularExpressionMatch m = matches.next();
      if (m.captured(1).toStdString() == label) line = m.captured(2).toInt();
    }
  }
  return line;
}

NotebookExecution::NotebookExecution(QObject* parent) : QObject(parent) {}

NotebookExecution::~NotebookExecution() = default;

void NotebookExecution::setDocument(NotebookDocument* document) {
  if (document_ == document) return;
  dropWaiting();
  document_ = document;
}

void NotebookExecution::setKernel(KernelClient* kernel) {
  if (kernel_ == kernel) return;
  if (kernel_) disconnect(kernel_, nullptr, this, nullptr);
  for (const auto& entry : queue_.takeAll()) emit cellStateChanged(entry.cellId);
  streams_.clear();
  executionCounts_.clear();
  setBusy(false);
  kernel_ = kernel;
  if (!kernel_) return;
  connect(kernel_, &KernelClient::started, this, &NotebookExecution::onStarted);
  connect(kernel_, &KernelClient::streamOutput, this, &NotebookExecution::onStream);
  connect(kernel_, &KernelClient::displayData, this, &NotebookExecution::onDisplay);
  connect(kernel_, &KernelClient::executeResult, this, &NotebookExecution::onResult);
  connect(kernel_, &KernelClient::executeError, this, &NotebookExecution::onError);
  connect(kernel_, &KernelClient::finished, this, &NotebookExecution::onFinished);
}

bool NotebookExecution::run(const std::vector<std::string>& cellIds) {
  if (!document_) return false;
  if (!kernel_) {
    emit message(tr("No Python kernel is connected, so the cell cannot run. Restart the studio to start one."));
    return false;
  }
  bool queued = false;
  for (const std::string& id : cellIds) {
    const auto index = document_->index_of(id);
    if (!index || !document_->cell(*index).is_code()) continue;
    queue_.enqueue(id, now());
    queued = true;
    emit cellStateChanged(id);
  }
  if (queued) setBusy(true);
  submitNext();
  return queued;
}

void NotebookExecution::submitNext() {
  while (const ExecutionQueue::Entry* next = queue_.nextToSubmit()) {
    const std::string cellId = next->cellId;
    const auto index = document_ ? document_->index_of(cellId) : std::nullopt;
    if (!index || !kernel_ || !document_->cell(*index).is_code()) {  // deleted or retyped while waiting
      queue_.dropNextToSubmit();
      emit cellStateChanged(cellId);
      continue;
    }
    const std::string& source = document_->cell(*index).source;
    quint64 request = 0;
    try {
      document_->set_outputs(*index, {}, std::nullopt);
      request = kernel_->execute(QString::fromStdString(source));
    } catch (const std::exception& e) {  // never let an exception out of a kernel signal's slot
      queue_.dropNextToSubmit();
      emit cellStateChanged(cellId);
      emit message(tr("Could not send the cell to the kernel: %1").arg(QString::fromUtf8(e.what())));
      continue;
    }
    queue_.markSubmitted(request);
    streams_.emplace(request, StreamAccumulator(limits_));
    emit cellStateChanged(cellId);
    break;
  }
  if (queue_.empty()) setBusy(false);
}

void NotebookExecution::dropWaiting() {
  for (const std::string& id : queue_.dropWaiting()) emit cellStateChanged(id);
  if (queue_.empty()) setBusy(false);
}

void NotebookExecution::interrupt() {
  dropWaiting();
  if (kernel_ && queue_.inFlight()) kernel_->interrupt();
}

void NotebookExecution::restart() {
  dropWaiting();
  if (kernel_) kernel_->restart();
}

void NotebookExecution::setBusy(bool busy) {
  if (busy_ == busy) return;
  busy_ = busy;
  emit busyChanged(busy);
}

std::optional<std::size_t> NotebookExecution::cellIndexFor(quint64 request) const {
  if (!document_) return std::nullopt;
  const auto cellId = queue_.cellFor(request);
  if (!cellId) return std::nullopt;
  return document_->index_of(*cellId);
}

void NotebookExecution::appendOutput(quint64 request, nlohmann::json output) {
  const auto index = cellIndexFor(request);
  if (!index || !document_->cell(*index).is_code()) return;
  document_->edit_outputs(*index, [&](std::vector<nlohmann::json>& outputs) { outputs.push_back(std::move(output)); });
}

void NotebookExecution::onStarted(quint64 id, int executionCount) {
  const auto cellId = queue_.markStarted(id, now());
  if (!cellId) return;
  executionCounts_[id] = executionCount;
  if (const auto index = cellIndexFor(id); index && document_->cell(*index).is_code()) {
    document_->set_execution_count(*index, executionCount);
  }
  emit cellStateChanged(*cellId);
}

void NotebookExecution::onStream(quint64 id, Stream stream, const QString& text) {
  const auto index = cellIndexFor(id);
  if (!index || !document_->cell(*index).is_code()) return;
  auto accumulator = streams_.find(id);
  if (accumulator == streams_.end()) accumulator = streams_.emplace(id, StreamAccumulator(limits_)).first;
  const std::string chunk = text.toStdString();
  document_->edit_outputs(*index, [&](std::vector<nlohmann::json>& outputs) {
    accumulator->second.append(outputs, nbformat_name(stream), chunk);
  });
}

void NotebookExecution::onDisplay(quint64 id, const DisplayData& data) {
  appendOutput(id, display_data_output(data));
}

void NotebookExecution::onResult(quint64 id, int executionCount, const DisplayData& data) {
  appendOutput(id, execute_result_output(executionCount, data));
}

void NotebookExecution::onError(quint64 id, const ExecutionError& error) {
  appendOutput(id, error_output(error));
  const auto cellId = queue_.cellFor(id);
  const auto count = executionCounts_.find(id);
  if (!cellId || count == executionCounts_.end()) return;
  if (const int line = tracebackLineInCell(error.traceback, std::to_string(count->second)); line > 0) {
    emit cellErrorLine(*cellId, line);
  }
}

void NotebookExecution::onFinished(const ExecutionSummary& summary) {
  const auto done = queue_.finish(summary.id, now());
  streams_.erase(summary.id);
  executionCounts_.erase(summary.id);
  if (!done) return;
  if (document_ && summary.execution_count > 0) {
    if (const auto index = document_->index_of(done->cellId); index && document_->cell(*index).is_code()) {
      if (document_->cell(*index).execution_count != summary.execution_count) {
        document_->set_execution_count(*index, summary.execution_count);
      }
    }
  }
  const double seconds = summary.seconds > 0 ? summary.seconds : done->runTime.count();
  emit cellStateChanged(done->cellId);
  emit cellFinished(done->cellId, summary.status, seconds);
  if (summary.status != ExecutionStatus::ok) dropWaiting();  // Jupyter: an error stops the cells queued behind
  submitNext();
}

}  // namespace rt::studio
