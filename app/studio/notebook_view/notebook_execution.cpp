#include "notebook_execution.h"

#include "runner/cell_output_builder.h"

#include <QRegularExpression>

namespace rt::studio {

namespace {

ExecutionQueue::Clock::time_point now() { return ExecutionQueue::Clock::now(); }

}  // namespace

int traceback_line_in_cell(const std::vector<std::string>& traceback, const std::string& label) {
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

void NotebookExecution::set_document(NotebookDocument* document) {
  if (document_ == document) return;
  drop_waiting();
  document_ = document;
}

void NotebookExecution::set_kernel(KernelClient* kernel) {
  if (kernel_ == kernel) return;
  if (kernel_) disconnect(kernel_, nullptr, this, nullptr);
  for (const auto& entry : queue_.take_all()) emit cellStateChanged(entry.cell_id);
  streams_.clear();
  execution_counts_.clear();
  set_busy(false);
  kernel_ = kernel;
  if (!kernel_) return;
  connect(kernel_, &KernelClient::started, this, &NotebookExecution::on_started);
  connect(kernel_, &KernelClient::streamOutput, this, &NotebookExecution::on_stream);
  connect(kernel_, &KernelClient::displayData, this, &NotebookExecution::on_display);
  connect(kernel_, &KernelClient::executeResult, this, &NotebookExecution::on_result);
  connect(kernel_, &KernelClient::executeError, this, &NotebookExecution::on_error);
  connect(kernel_, &KernelClient::finished, this, &NotebookExecution::on_finished);
}

bool NotebookExecution::run(const std::vector<std::string>& cell_ids) {
  if (!document_) return false;
  if (!kernel_) {
    emit message(tr("No Python kernel is connected, so the cell cannot run. Restart the studio to start one."));
    return false;
  }
  bool queued = false;
  for (const std::string& id : cell_ids) {
    const auto index = document_->index_of(id);
    if (!index || !document_->cell(*index).is_code()) continue;
    queue_.enqueue(id, now());
    queued = true;
    emit cellStateChanged(id);
  }
  if (queued) set_busy(true);
  submit_next();
  return queued;
}

void NotebookExecution::submit_next() {
  while (const ExecutionQueue::Entry* next = queue_.next_to_submit()) {
    const std::string cell_id = next->cell_id;
    const auto index = document_ ? document_->index_of(cell_id) : std::nullopt;
    if (!index || !kernel_ || !document_->cell(*index).is_code()) {  // deleted or retyped while waiting
      queue_.drop_next_to_submit();
      emit cellStateChanged(cell_id);
      continue;
    }
    const std::string& source = document_->cell(*index).source;
    quint64 request = 0;
    try {
      document_->set_outputs(*index, {}, std::nullopt);
      request = kernel_->execute(QString::fromStdString(source));
    } catch (const std::exception& e) {  // never let an exception out of a kernel signal's slot
      queue_.drop_next_to_submit();
      emit cellStateChanged(cell_id);
      emit message(tr("Could not send the cell to the kernel: %1").arg(QString::fromUtf8(e.what())));
      continue;
    }
    queue_.mark_submitted(request);
    streams_.emplace(request, StreamAccumulator(limits_));
    emit cellStateChanged(cell_id);
    break;
  }
  if (queue_.empty()) set_busy(false);
}

void NotebookExecution::drop_waiting() {
  for (const std::string& id : queue_.drop_waiting()) emit cellStateChanged(id);
  if (queue_.empty()) set_busy(false);
}

void NotebookExecution::interrupt() {
  drop_waiting();
  if (kernel_ && queue_.in_flight()) kernel_->interrupt();
}

void NotebookExecution::restart() {
  drop_waiting();
  if (kernel_) kernel_->restart();
}

void NotebookExecution::set_busy(bool busy) {
  if (busy_ == busy) return;
  busy_ = busy;
  emit busyChanged(busy);
}

std::optional<std::size_t> NotebookExecution::cell_index_for(quint64 request) const {
  if (!document_) return std::nullopt;
  const auto cell_id = queue_.cell_for(request);
  if (!cell_id) return std::nullopt;
  return document_->index_of(*cell_id);
}

void NotebookExecution::append_output(quint64 request, nlohmann::json output) {
  const auto index = cell_index_for(request);
  if (!index || !document_->cell(*index).is_code()) return;
  document_->edit_outputs(*index, [&](std::vector<nlohmann::json>& outputs) { outputs.push_back(std::move(output)); });
}

void NotebookExecution::on_started(quint64 id, int execution_count) {
  const auto cell_id = queue_.mark_started(id, now());
  if (!cell_id) return;
  execution_counts_[id] = execution_count;
  if (const auto index = cell_index_for(id); index && document_->cell(*index).is_code()) {
    document_->set_execution_count(*index, execution_count);
  }
  emit cellStateChanged(*cell_id);
}

void NotebookExecution::on_stream(quint64 id, Stream stream, const QString& text) {
  const auto index = cell_index_for(id);
  if (!index || !document_->cell(*index).is_code()) return;
  auto accumulator = streams_.find(id);
  if (accumulator == streams_.end()) accumulator = streams_.emplace(id, StreamAccumulator(limits_)).first;
  const std::string chunk = text.toStdString();
  document_->edit_outputs(*index, [&](std::vector<nlohmann::json>& outputs) {
    accumulator->second.append(outputs, nbformat_name(stream), chunk);
  });
}

void NotebookExecution::on_display(quint64 id, const DisplayData& data) {
  append_output(id, display_data_output(data));
}

void NotebookExecution::on_result(quint64 id, int execution_count, const DisplayData& data) {
  append_output(id, execute_result_output(execution_count, data));
}

void NotebookExecution::on_error(quint64 id, const ExecutionError& error) {
  append_output(id, error_output(error));
  const auto cell_id = queue_.cell_for(id);
  const auto count = execution_counts_.find(id);
  if (!cell_id || count == execution_counts_.end()) return;
  if (const int line = traceback_line_in_cell(error.traceback, std::to_string(count->second)); line > 0) {
    emit cellErrorLine(*cell_id, line);
  }
}

void NotebookExecution::on_finished(const ExecutionSummary& summary) {
  const auto done = queue_.finish(summary.id, now());
  streams_.erase(summary.id);
  execution_counts_.erase(summary.id);
  if (!done) return;
  if (document_ && summary.execution_count > 0) {
    if (const auto index = document_->index_of(done->cell_id); index && document_->cell(*index).is_code()) {
      if (document_->cell(*index).execution_count != summary.execution_count) {
        document_->set_execution_count(*index, summary.execution_count);
      }
    }
  }
  const double seconds = summary.seconds > 0 ? summary.seconds : done->run_time.count();
  emit cellStateChanged(done->cell_id);
  emit cellFinished(done->cell_id, summary.status, seconds);
  if (summary.status != ExecutionStatus::ok) drop_waiting();  // Jupyter: an error stops the cells queued behind
  submit_next();
}

}  // namespace rt::studio
