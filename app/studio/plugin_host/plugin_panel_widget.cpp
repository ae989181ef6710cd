#include "plugin_host/plugin_panel_widget.h"

#include <QVBoxLayout>

namespace rt::studio {

PluginPanelWidget::PluginPanelWidget(const plugin::PluginRecord& record, QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  picker_ = new SessionPicker(this);
  host_ = new ImGuiHostWidget(this);
  layout->addWidget(picker_);
  layout->addWidget(host_, 1);

  auto content = std::make_unique<PluginPanelContent>(record);
  content_ = content.get();
  std::string id = record.manifest.id;
  content_->on_failure = [id](const std::string& why) {
    auto lock = plugin::lock_process_plugins();
    plugin::process_plugins().mark_failed(id, "panel: " + why);
  };
  host_->setContent(std::move(content));

  connect(picker_, &SessionPicker::sessionLoaded, this,
          [this](std::shared_ptr<const prof::SessionData> data, bool live) {
            int current = picker_->currentIndex();
            QString title = current >= 0 ? picker_->entryText(current) : QString();
            const bool recording = live && data && !data->complete;  // the picker's live entries include finished ones
            content_->set_session(std::move(data), title.toStdString(), recording);
            host_->requestFrame();
          });
  connect(picker_, &SessionPicker::sessionGrew, host_, [this] { host_->requestFrame(); });
}

}  // namespace rt::studio
