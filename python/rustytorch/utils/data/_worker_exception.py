"""WorkerException: an exception raised in a DataLoader worker, carried to the parent as text
(PyTorch's ExceptionWrapper behaviour).

    except Exception:
        result = WorkerException.from_current("in DataLoader worker process 1")   # in the worker
    ...
    result.reraise()                                                               # in the parent

The exception object itself may not pickle, so the worker sends its type and the formatted
traceback. reraise() raises the same type with the message

    Caught ValueError in DataLoader worker process 1.
    Original Traceback (most recent call last):
      ...
    ValueError: bad sample

or a RuntimeError with that message when the type cannot be built from one string argument (or
cannot be pickled). KeyError's str() is the repr of its argument, so it gets the message in a
string whose repr is the message itself, keeping the traceback readable.
"""
import pickle
import sys
import traceback


class _ReadableKeyErrorMessage(str):
    def __repr__(self):
        return str(self)


class WorkerException:
    def __init__(self, exc_type, traceback_text, where):
        self.exc_type = exc_type
        self.exc_name = exc_type.__name__
        self.traceback_text = traceback_text
        self.where = where

    @classmethod
    def from_current(cls, where):
        """Captures the exception being handled (call inside an `except` block)."""
        exc_type, exc, tb = sys.exc_info()
        return cls(exc_type, "".join(traceback.format_exception(exc_type, exc, tb)), where)

    def __getstate__(self):
        try:
            pickle.dumps(self.exc_type)
            exc_type = self.exc_type
        except Exception:  # a class defined inside a function: it travels as RuntimeError
            exc_type = RuntimeError
        return {"exc_type": exc_type, "exc_name": self.exc_name, "traceback_text": self.traceback_text, "where": self.where}

    def message(self):
        return f"Caught {self.exc_name} {self.where}.\nOriginal {self.traceback_text}"

    def reraise(self):
        text = self.message()
        if self.exc_type is KeyError:
            text = _ReadableKeyErrorMessage(text)
        try:
            exc = self.exc_type(text)
        except Exception:  # an exception type whose constructor wants other arguments
            raise RuntimeError(text) from None
        raise exc
