// A real profiled training for the visualizer tests: a small MLP trained with Adam for a few steps by
// the engine, recorded by rt::prof::Session with record_shapes, profile_memory and with_stack, logging
// "loss" and "lr" counters and one step per iteration.
#pragma once
#include <QColor>
#include <QImage>
#include <QRect>
#include <QString>

#include <memory>
#include <string>

#include "rt/prof/events.h"

namespace rt::studio::test {

std::shared_ptr<const prof::SessionData> record_mlp_training(const std::string& name, int steps = 6, float lr = 1e-2f);
// A fresh store file under the artifacts folder holding `sessions` (removed first when it exists).
QString save_store(const QString& file_name, std::initializer_list<std::shared_ptr<const prof::SessionData>> sessions);
// How many different colours the image has in `area` (quantised to 4 bits a channel).
int distinct_colors(const QImage& image, const QRect& area);

}  // namespace rt::studio::test
