# The channel of every probe: gpu/sysinfo.c (sysinfo_python_probe) runs
# `PY -c <this file, then the probe> ...` and reads the probe's answers
# from here only, never from its standard output or error, which the
# packages the probe imports may write anything to.
#
# gpuopt gives the interpreter, as its standard input, one end of a
# socketpair(AF_UNIX, SOCK_SEQPACKET) on which it has already sent one
# message: a token of 32 hex digits, new for each run, from getrandom(2).
# Here, before anything but the interpreter's own builtin modules is
# imported, the token is read, the socket is moved off descriptor 0 to a
# descriptor that child processes do not inherit, and standard input
# becomes /dev/null. emit(obj) then sends "TOKEN JSON" as one message.
#
# Why both, a socket of messages and a token: a package can write to any
# descriptor it finds (a C library logging to "fd 3", a loop over
# /proc/self/fd), so no descriptor number is safe from it. gpuopt keeps
# only the messages that begin with the token, which exists nowhere but in
# gpuopt and in this function's closure (not in argv, the environment or a
# file), so a stray or forged write is dropped; and since the kernel keeps
# each message of a SOCK_SEQPACKET socket whole and apart, such a write can
# neither cut into one of the probe's answers nor glue a prefix to it. What
# this cannot stop is code that sets out to read the token from this
# process's memory: a package is run with the probe's own rights.
import os as _os
import sys as _sys


def _channel():
    def fail(why):
        _sys.stderr.write("gpuopt probe: %s\n" % why)
        _sys.exit(3)

    try:
        st = _os.fstat(0)
    except OSError as e:
        fail("no standard input (%s): it must be gpuopt's channel" % e)
    if st.st_mode & 0o170000 != 0o140000:
        fail("standard input is not gpuopt's channel (a socket): was the interpreter started "
             "by a wrapper that replaces it?")
    token = _os.read(0, 256).decode("ascii", "replace").strip()
    if len(token) != 32 or any(c not in "0123456789abcdef" for c in token):
        fail("gpuopt's channel gave no token")
    fd = _os.dup(0)  # not inherited by the processes a package starts (PEP 446)
    null = _os.open(_os.devnull, _os.O_RDONLY)
    _os.dup2(null, 0)
    _os.close(null)
    prefix = (token + " ").encode()

    def emit(obj):
        """Sends obj, a JSON-able dict, to gpuopt as one message."""
        import json
        _os.write(fd, prefix + json.dumps(obj).encode() + b"\n")

    return emit


emit = _channel()
del _channel
