#include "notebook_file.h"

#include <QFileInfo>
#include <QObject>

#include <exception>

#include "notebook/ipynb.h"
#include "shell/prompts.h"

namespace rt::studio {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

std::optional<NotebookDocument> open_notebook_file(QWidget* parent, const QString& path) {
  const QString name = QFileInfo(path).fileName();
  const QString title = QObject::tr("Cannot open %1").arg(name);
  const QString kept = QObject::tr("Nothing that is open was changed.");
  try {
    return NotebookDocument::open(path.toStdString());
  } catch (const NotebookFormatError& e) {
    QString what = QObject::tr("%1 is not a notebook the studio can read: %2").arg(path, qs(e.problem()));
    if (!e.location().empty()) what += QObject::tr(" (at %1)").arg(qs(e.location()));
    report_problem(parent, title, what, qs(e.fix()) + ' ' + kept);
  } catch (const NotebookFileError& e) {
    report_problem(parent, title, qs(e.what()),
                   QObject::tr("Check that the file exists and that you may read it. %1").arg(kept));
  } catch (const std::exception& e) {
    report_problem(parent, title, QObject::tr("%1 could not be opened: %2").arg(path, qs(e.what())),
                   QObject::tr("Pick an .ipynb notebook file. %1").arg(kept));
  }
  return std::nullopt;
}

bool save_notebook_file(QWidget* parent, NotebookDocument& document, const QString& path) {
  const QString name = QFileInfo(path).fileName();
  const QString kept = QObject::tr("Nothing was lost: the notebook stays open with its unsaved changes (and its "
                                   "autosaved recovery copy). Use File > Save As to save it somewhere you can "
                                   "write.");
  try {
    document.save_as(path.toStdString());
    return true;
  } catch (const NotebookFileError& e) {
    report_problem(parent, QObject::tr("Cannot save %1").arg(name), qs(e.what()), kept);
  } catch (const std::exception& e) {
    report_problem(parent, QObject::tr("Cannot save %1").arg(name),
                   QObject::tr("%1 could not be written: %2").arg(path, qs(e.what())), kept);
  }
  return false;
}

}  // namespace rt::studio
