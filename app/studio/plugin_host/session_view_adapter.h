// plugin_host/session_view_adapter.h — a profiler session as a panel plugin sees it (rt::plugin::SessionView).
//
//   SessionDataView view(data, "runs.sqlite #3", /*live=*/false);
//   frame.session = &view;
//   panel.draw(frame);
//
// The view reads `data` as it is at each call, so a live session that the picker grows between frames shows
// its new records without a new view. It keeps `data` alive.
#pragma once
#include <memory>
#include <string>

#include "rt/plugin/panel_sdk.h"
#include "rt/prof/events.h"

namespace rt::studio {

class SessionDataView final : public plugin::SessionView {
 public:
  SessionDataView(std::shared_ptr<const prof::SessionData> data, std::string title, bool live)
      : data_(std::move(data)), title_(std::move(title)), live_(live) {}

  std::string_view title() const override { return title_; }
  bool live() const override { return live_; }
  size_t step_count() const override { return data_->steps.size(); }
  size_t gradient_histogram_count() const override { return data_->gradient_histograms.size(); }
  plugin::GradientHistogram gradient_histogram(size_t i) const override;

  const prof::SessionData& data() const { return *data_; }

 private:
  std::shared_ptr<const prof::SessionData> data_;
  std::string title_;
  bool live_;
};

}  // namespace rt::studio
