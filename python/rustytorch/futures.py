"""rustytorch.futures.Future: the result of an asynchronous operation (torch.futures.Future's core API):
wait(), value(), done(), then(callback), set_result(), set_exception(). DDP communication hooks return one;
Work.get_future() wraps a collective's Work in one whose value is the list of tensors the collective wrote."""
import threading


class Future:
    def __init__(self):
        self._done = threading.Event()
        self._value = None
        self._error = None
        self._callbacks = []
        self._lock = threading.Lock()

    def done(self):
        return self._done.is_set()

    def wait(self):
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        if not self.done():
            raise RuntimeError("Future.value() called before the future completed; call wait() first")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, error):
        self._finish(None, error)

    def _finish(self, value, error):
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("this Future already has a result")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback):
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A Future for callback(self), run when this one completes."""
        chained = Future()

        def run(fut):
            try:
                chained.set_result(callback(fut))
            except BaseException as e:  # noqa: BLE001 -- the chained future carries any failure
                chained.set_exception(e)

        self.add_done_callback(run)
        return chained


class _LazyFuture(Future):
    """A Future computed by whoever first waits for it (or reads its value): _compute() returns the value or
    raises. Collectives complete on backend threads that run no Python, so their callbacks run here."""

    def _compute(self):
        raise NotImplementedError

    def _complete(self):
        if super().done():
            return
        try:
            result, error = self._compute(), None
        except BaseException as e:  # noqa: BLE001 -- the future carries any failure
            result, error = None, e
        with self._lock:
            if self._done.is_set():
                return
        self._finish(result, error)

    def wait(self):
        self._complete()
        return super().wait()

    def value(self):
        self._complete()
        return super().value()

    def then(self, callback):
        return _ChainedFuture(self, callback)


class _WorkFuture(_LazyFuture):
    """A Future over a collective's Work: its value is the list of tensors the work wrote."""

    def __init__(self, work):
        super().__init__()
        self._work = work

    def done(self):
        return super().done() or self._work.is_completed()

    def _compute(self):
        self._work.wait()
        return list(self._work.result())


class _ChainedFuture(_LazyFuture):
    def __init__(self, parent, callback):
        super().__init__()
        self._parent = parent
        self._callback = callback

    def done(self):
        return super().done() or self._parent.done()

    def _compute(self):
        self._parent.wait()
        return self._callback(self._parent)
