"""Run inside a sandbox (standard library only): try each call the seccomp filter must deny.

Prints one JSON object: for each attack, ``"ok"`` when it worked, else the errno name, plus
what the canary key read gave (``key``) and the descriptors the process was given (``fds``).
Usage: ``python3 seccomp_probe.py KEY_DESCRIPTION``.
"""

import ctypes
import errno
import json
import os
import platform
import sys

NR = {  # syscall numbers the C library does not wrap
    "x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250, "ptrace": 101,
               "process_vm_readv": 310, "pidfd_getfd": 438, "clone": 56, "clone3": 435},
    "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219, "ptrace": 117,
                "process_vm_readv": 270, "pidfd_getfd": 438, "clone": 220, "clone3": 435},
}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17
KEYCTL_READ, KEY_SPEC_SESSION_KEYRING = 11, -3


def outcome(ret):
    if ret >= 0:
        return "ok"
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def sys_call(name, *args):
    return libc.syscall(ctypes.c_long(NR[name]), *args)


def read_key(description):
    key = sys_call("request_key", b"user", description.encode(), None,
                   ctypes.c_long(KEY_SPEC_SESSION_KEYRING))
    if key < 0:
        return outcome(key), None
    buf = ctypes.create_string_buffer(256)
    size = sys_call("keyctl", ctypes.c_long(KEYCTL_READ), ctypes.c_long(key), buf,
                    ctypes.c_long(256))
    return outcome(size), buf.raw[: max(0, size)].decode("latin-1")


def child():
    pid = os.fork()
    if pid == 0:
        import time

        time.sleep(30)
        os._exit(0)
    return pid


def main():
    seen = {}
    seen["keyring"], seen["key"] = read_key(sys.argv[1])
    pid = child()
    try:
        seen["ptrace"] = outcome(sys_call("ptrace", ctypes.c_long(16), ctypes.c_long(pid), None,
                                          None))  # PTRACE_ATTACH
        pidfd = os.pidfd_open(pid)
        seen["pidfd_getfd"] = outcome(sys_call("pidfd_getfd", ctypes.c_long(pidfd),
                                               ctypes.c_long(0), ctypes.c_long(0)))
        os.close(pidfd)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    src = ctypes.create_string_buffer(b"secret", 16)
    dst = ctypes.create_string_buffer(16)

    class Iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    local = Iovec(ctypes.cast(dst, ctypes.c_void_p), 16)
    remote = Iovec(ctypes.cast(src, ctypes.c_void_p), 16)
    seen["process_vm_readv"] = outcome(sys_call(
        "process_vm_readv", ctypes.c_long(os.getpid()), ctypes.byref(local), ctypes.c_long(1),
        ctypes.byref(remote), ctypes.c_long(1), ctypes.c_long(0)))
    ret = sys_call("clone", ctypes.c_long(CLONE_NEWUSER | SIGCHLD), None, None, None, None)
    if ret == 0:
        os._exit(0)
    if ret > 0:
        os.waitpid(ret, 0)
    seen["clone_newuser"] = outcome(ret)
    seen["clone3"] = outcome(sys_call("clone3", None, ctypes.c_long(0)))
    for path in ("/x", "/dev/x", "/dev/shm/x"):
        try:
            with open(path, "wb") as fh:
                fh.write(b"x")
            seen["write " + path] = "ok"
        except OSError as exc:
            seen["write " + path] = errno.errorcode[exc.errno]
    # last: on success this process is in a user and mount namespace of its own
    seen["unshare_newuser"] = outcome(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS))
    seen["mount_tmpfs"] = outcome(libc.mount(b"none", b"/tmp", b"tmpfs", 0, b"size=1g"))
    seen["fds"] = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
