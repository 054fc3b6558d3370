"""The exceptions the SDK raises."""


class Error(Exception):
    """A fatal error: bad options, an unknown queue, a Redis that refuses our login."""


class ConnectionError(Error):  # noqa: A001 - the SDK's own name, as in the C++ SDK
    """Redis could not be reached or failed a command.

    Raised by the lower-level calls (``fetch``, ``complete``, ``extend``, ``nudge``) only;
    the next call reconnects. ``run()`` never raises it: it waits and retries.
    """
