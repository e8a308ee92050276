"""The sandbox's worker (`l0kit.sandbox`): the script a confined interpreter runs, `python -S -s -c <this file> SETTINGS`.

It is read as text and run in a fresh process; it is never imported (the line below refuses): run at import, it would
put the importing process's standard streams on /dev/null. `nbs/03_sandbox.ipynb` explains it part by part; each part
starts at a `# ==== part:` line.
"""
if __name__ != '__main__': raise ImportError("l0kit/_sandbox_worker.py is the sandbox's worker script, run by l0kit.sandbox in a confined process; it is not imported")

# ==== part: start: the protocol on private copies of fds 0 and 1, the program on /dev/null; prctl through ctypes
import ast, builtins, ctypes, io, json, math, os, resource, select, shutil, signal, struct, sys, time
settings = json.loads(sys.argv[1])
WORK = os.path.realpath(settings["workdir"])
os.chdir(WORK)
# the protocol runs on private copies of fds 0 and 1; the program gets /dev/null there
proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2): os.dup2(null, fd)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = libc.prctl.restype = ctypes.c_long

def fail(what):
    err = ctypes.get_errno()
    raise OSError(err, f"{what} failed: {os.strerror(err)}")

def prctl(*args):
    if libc.prctl(*[ctypes.c_ulong(a) for a in args] + [ctypes.c_ulong(0)] * (5 - len(args))) != 0: fail(f"prctl{args[:2]}")

# ==== part: kernel: the kernel layers: capabilities, Landlock, seccomp, namespaces
def drop_capabilities():
    for cap in range(64):
        if libc.prctl(24, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22: break   # PR_CAPBSET_DROP until EINVAL
    libc.prctl(47, 4, 0, 0, 0)                                                     # PR_CAP_AMBIENT_CLEAR_ALL
    hdr, data = struct.pack("Ii", 0x20080522, 0), ctypes.create_string_buffer(24)  # _LINUX_CAPABILITY_VERSION_3, all zero
    if libc.syscall(ctypes.c_long(SYS["capset"]), hdr, data) != 0: fail("capset")

# ---- layer: Landlock (reads only below the interpreter's paths, writes only in the work directory) ----
FS_READ = (1 << 0) | (1 << 2) | (1 << 3)          # EXECUTE, READ_FILE, READ_DIR
def landlock(abi, read_paths):
    fs_all = (1 << 13) - 1 | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0) | (1 << 15 if abi >= 5 else 0)
    attr = struct.pack("QQQ", fs_all, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)[:8 if abi < 4 else 16 if abi < 6 else 24]
    ruleset = libc.syscall(ctypes.c_long(444), attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0: fail("landlock_create_ruleset")
    def allow(path, access):
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        if not os.path.isdir(path): access &= (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14 if abi >= 3 else 0)  # file rights only
        rule = struct.pack("=Qi", access, fd)
        try:
            if libc.syscall(ctypes.c_long(445), ctypes.c_int(ruleset), ctypes.c_int(1), rule, ctypes.c_uint32(0)) != 0: fail(f"landlock_add_rule({path})")
        finally: os.close(fd)
    for p in read_paths:
        if os.path.exists(p): allow(p, FS_READ)
    allow(WORK, fs_all)
    allow(os.devnull, (1 << 1) | (1 << 2) | (1 << 14 if abi >= 3 else 0))   # WRITE_FILE, READ_FILE, TRUNCATE
    if libc.syscall(ctypes.c_long(446), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0: fail("landlock_restrict_self")
    os.close(ruleset)

# ---- layer: seccomp (a BPF filter of system calls, written by hand: no library needed) ----
ARCHES = {"x86_64": (0xC000003E, dict(
    socket=41, socketpair=53, connect=42, bind=49, listen=50, accept=43, accept4=288, execve=59, execveat=322,
    ptrace=101, process_vm_readv=310, process_vm_writev=311, kcmp=312, pidfd_getfd=438, unshare=272, setns=308,
    mount=165, umount2=166, pivot_root=155, chroot=161, open_tree=428, move_mount=429, fsopen=430, fsconfig=431,
    fsmount=432, fspick=433, mount_setattr=442, bpf=321, perf_event_open=298, userfaultfd=323, io_uring_setup=425,
    io_uring_enter=426, io_uring_register=427, keyctl=250, add_key=248, request_key=249, init_module=175,
    finit_module=313, delete_module=176, kexec_load=246, kexec_file_load=320, reboot=169, swapon=167, swapoff=168,
    acct=163, sethostname=170, setdomainname=171, settimeofday=164, clock_settime=227, adjtimex=159,
    clock_adjtime=305, quotactl=179, syslog=103, personality=135, open_by_handle_at=304, name_to_handle_at=303,
    mknod=133, mknodat=259, setuid=105, setgid=106, setreuid=113, setregid=114, setresuid=117, setresgid=119,
    setfsuid=122, setfsgid=123, setgroups=116, capset=126, migrate_pages=256, move_pages=279, rt_sigqueueinfo=129,
    rt_tgsigqueueinfo=297, pidfd_send_signal=424, pidfd_open=434, fanotify_init=300, iopl=172, ioperm=173,
    clone=56, clone3=435, fork=57, vfork=58, kill=62, tkill=200, tgkill=234, setrlimit=160, prlimit64=302)),
  "aarch64": (0xC00000B7, dict(
    socket=198, socketpair=199, connect=203, bind=200, listen=201, accept=202, accept4=242, execve=221, execveat=281,
    ptrace=117, process_vm_readv=270, process_vm_writev=271, kcmp=272, pidfd_getfd=438, unshare=97, setns=268,
    mount=40, umount2=39, pivot_root=41, chroot=51, open_tree=428, move_mount=429, fsopen=430, fsconfig=431,
    fsmount=432, fspick=433, mount_setattr=442, bpf=280, perf_event_open=241, userfaultfd=282, io_uring_setup=425,
    io_uring_enter=426, io_uring_register=427, keyctl=219, add_key=217, request_key=218, init_module=105,
    finit_module=273, delete_module=106, kexec_load=104, kexec_file_load=294, reboot=142, swapon=224, swapoff=225,
    acct=89, sethostname=161, setdomainname=162, settimeofday=170, clock_settime=112, adjtimex=171,
    clock_adjtime=266, quotactl=60, syslog=116, personality=92, open_by_handle_at=265, name_to_handle_at=264,
    mknodat=33, setuid=146, setgid=144, setreuid=145, setregid=143, setresuid=147, setresgid=149,
    setfsuid=151, setfsgid=152, setgroups=159, capset=91, migrate_pages=238, move_pages=239, rt_sigqueueinfo=138,
    rt_tgsigqueueinfo=240, pidfd_send_signal=424, pidfd_open=434, fanotify_init=262,
    clone=220, clone3=435, kill=129, tkill=130, tgkill=131, setrlimit=164, prlimit64=261))}
AUDIT_ARCH, SYS = ARCHES.get(os.uname().machine, (None, {}))
# every process in the sandbox: no network, no exec, no debugging, no namespaces or mounts, no kernel knobs
WORKER_DENY = [n for n in SYS if n not in ("clone", "clone3", "fork", "vfork", "kill", "tkill", "tgkill",
                                          "setrlimit", "prlimit64", "pidfd_open")]
# a job process, in addition: no new processes or threads, signals only to itself, no raising its limits
JOB_DENY = ["clone", "fork", "vfork", "pidfd_open", "setrlimit"]
ALLOW, EPERM, ENOSYS, KILL = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38, 0x80000000

def seccomp_filter(deny, self_pid=None):
    prog = []
    def op(code, jt, jf, k): prog.append(struct.pack("HBBI", code, jt, jf, k))
    LD, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
    op(LD, 0, 0, 4); op(JEQ, 1, 0, AUDIT_ARCH); op(RET, 0, 0, KILL)      # another ABI (e.g. 32-bit calls): kill
    op(LD, 0, 0, 0)
    if AUDIT_ARCH == 0xC000003E: op(JGE, 0, 1, 0x40000000); op(RET, 0, 0, KILL)   # x32 numbers
    for name in deny:
        if name in SYS: op(JEQ, 0, 1, SYS[name]); op(RET, 0, 0, EPERM)
    if self_pid is not None:
        if "clone3" in SYS: op(JEQ, 0, 1, SYS["clone3"]); op(RET, 0, 0, ENOSYS)   # glibc then falls back to clone
        for name in ("kill", "tkill", "tgkill"):                                      # first argument must be itself
            op(JEQ, 0, 4, SYS[name]); op(LD, 0, 0, 16); op(JEQ, 0, 1, self_pid); op(RET, 0, 0, ALLOW); op(RET, 0, 0, EPERM)
        op(JEQ, 0, 6, SYS["prlimit64"])                                               # reading limits only
        op(LD, 0, 0, 32); op(JEQ, 0, 3, 0); op(LD, 0, 0, 36); op(JEQ, 0, 1, 0); op(RET, 0, 0, ALLOW); op(RET, 0, 0, EPERM)
    op(RET, 0, 0, ALLOW)
    return b"".join(prog)

def install_seccomp(deny, self_pid=None):
    if AUDIT_ARCH is None: raise OSError(f"no seccomp system-call table for {os.uname().machine}")
    code = seccomp_filter(deny, self_pid)
    buf = ctypes.create_string_buffer(code, len(code))
    class Prog(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    prog = Prog(len(code) // 8, ctypes.addressof(buf))
    if libc.prctl(ctypes.c_int(22), ctypes.c_ulong(2), ctypes.byref(prog), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0: fail("seccomp")

# ==== part: policy: the Python policy: an audit hook that refuses sockets, subprocesses, writes outside the work directory
BLOCKED_EVENTS = ("socket.", "subprocess.", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
                  "os.forkpty", "os.kill", "os.killpg", "os.chdir", "os.fchdir", "os.chroot", "os.putenv", "os.unsetenv",
                  "os.setuid", "os.setgid", "ctypes.", "_thread.start_new_thread", "sys.addaudithook", "pty.",
                  "webbrowser.", "signal.pthread_kill", "resource.setrlimit", "resource.prlimit")
BLOCKED_MODULES = {"socket", "_socket", "ssl", "_ssl", "subprocess", "_posixsubprocess", "multiprocessing",
                   "ctypes", "_ctypes", "asyncio", "urllib.request", "http.client", "ftplib", "smtplib", "telnetlib"}
PATH_EVENTS = {"os.remove": 1, "os.rmdir": 1, "os.mkdir": 1, "os.rename": 2, "os.link": 2, "os.symlink": 2,
               "os.chmod": 1, "os.chown": 1, "os.truncate": 1, "os.utime": 1, "shutil.rmtree": 1, "shutil.copyfile": 2,
               "shutil.move": 2, "shutil.copytree": 2}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

def inside_work(path):
    if isinstance(path, int): return False
    try: p = os.path.realpath(os.fsdecode(path))
    except Exception: return False
    return p == WORK or p.startswith(WORK + os.sep)

def audit(event, args):
    if event.startswith(BLOCKED_EVENTS):
        raise PermissionError(f"the sandbox does not allow {event}")
    if event == "import" and (args[0] in BLOCKED_MODULES or args[0].split(".")[0] in BLOCKED_MODULES):
        raise PermissionError(f"the sandbox does not allow importing {args[0]}")
    if event == "open":
        path, mode, flags = args
        writing = (mode is not None and any(c in mode for c in "wax+")) or (flags is not None and flags & WRITE_FLAGS)
        if writing and not inside_work(path):
            raise PermissionError(f"the sandbox does not allow writing {path!r} (only files in its temporary directory)")
    n = PATH_EVENTS.get(event)
    if n and not all(inside_work(a) for a in args[:n]):
        raise PermissionError(f"the sandbox does not allow {event} outside its temporary directory")

def no_threads(*args, **kwargs): raise PermissionError("the sandbox does not allow threads")

def python_policy():
    import _thread
    _thread.start_new_thread = _thread.start_new = no_threads   # CPython 3.11 raises no audit event for new threads
    if "threading" in sys.modules: sys.modules["threading"]._start_new_thread = no_threads
    sys.addaudithook(audit)

# ==== part: job: one job: the program's code and the entry call under a CPU-time timer
class Timeout(BaseException): pass       # BaseException: `except Exception` in the program cannot swallow it
def on_alarm(signum, frame): raise Timeout("the call ran past its time limit")
signal.signal(signal.SIGPROF, on_alarm)

def exact_json(v, depth=0):
    if depth > 50: return False
    t = type(v)
    if v is None or t in (bool, str): return True
    if t is int: return True
    if t is float: return math.isfinite(v)
    if t is list: return all(exact_json(x, depth + 1) for x in v)
    if t is dict: return all(type(k) is str and exact_json(x, depth + 1) for k, x in v.items())
    return False

def describe(v):
    try: r = repr(v)
    except ValueError:  # an int too long to print
        if type(v) is int: return f"<int of {v.bit_length()} bits>", False
        raise
    return r[:100_000], len(r) <= 100_000

def failure(error_type, error):
    return {"ok": False, "value": None, "value_repr": "", "error_type": error_type, "error": error, "stdout": "", "duration_s": 0.0}

def run(job):
    out = io.StringIO()
    sys.stdout = sys.stderr = out
    sys.stdin = io.StringIO("")
    res = failure(None, None)
    t0 = time.perf_counter()
    try:
        try: args = ast.literal_eval(job["args_text"])
        except Exception as e:
            res.update(error_type="ArgumentError", error=f"args_text is not a Python literal: {e}")
            return res
        if not isinstance(args, tuple): args = (args,)
        signal.setitimer(signal.ITIMER_PROF, job["timeout_s"])
        try:
            ns = {"__name__": "__sandbox__", "__builtins__": builtins}
            exec(compile(job["source"], "<program>", "exec"), ns)
            if job.get("harness"):
                hns = {"__builtins__": builtins}
                exec(compile(job["harness"], "<harness>", "exec"), hns)
                value = hns["harness"](ns, job["entry"], args)
            else:
                if job["entry"] not in ns: raise NameError(f"the program defines no {job['entry']!r}")
                value = ns[job["entry"]](*args)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        res["duration_s"] = time.perf_counter() - t0
        r, complete = describe(value)
        res.update(ok=True, value=value if complete and exact_json(value) else r, value_repr=r)
    except BaseException as e:
        res["duration_s"] = time.perf_counter() - t0
        signal.setitimer(signal.ITIMER_PROF, 0)
        res["error_type"] = type(e).__name__
        try: res["error"] = str(e)[:2000]
        except Exception: res["error"] = "<unprintable>"
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        res["stdout"] = out.getvalue()[:10_000]
    return res

def encoded(res):
    try: return json.dumps(res)
    except BaseException as e:  # the value could not be encoded, or a stray Timeout fired late
        return json.dumps(failure(type(e).__name__, "could not report the result"))

# ==== part: fork: one fresh process per job, its reply checked
FIELDS = {"ok": (bool,), "value": None, "value_repr": (str,), "error_type": (str, type(None)), "error": (str, type(None)),
          "stdout": (str,), "duration_s": (float, int)}
MAX_REPLY = settings["max_reply_mb"] * 1024 * 1024

def job_process(r_job, w):
    "In the forked child: wait for the job, confine the process further, run it, write one length-prefixed reply, exit."
    try:
        os.dup2(r_job, 3); os.dup2(w, 4); os.closerange(5, 1 << 16)   # only /dev/null, the job and the reply pipe stay
        os.setpgid(0, 0)
        text = b""
        while True:
            chunk = os.read(3, 1 << 20)
            if not chunk: break
            text += chunk
        if not text: os._exit(0)                        # the worker went away before giving a job
        os.close(3)
        job = json.loads(text)
        cpu = math.ceil(job["timeout_s"]) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # a program that ignores the CPU timer: SIGXCPU, SIGKILL
        if settings["os_layers"]: install_seccomp(JOB_DENY, os.getpid())
        python_policy()
        data = encoded(run(job)).encode()
    except BaseException as e:
        data = json.dumps(failure("SandboxError", f"the job process could not be confined: {e}")).encode()
    data = struct.pack(">Q", len(data)) + data
    while data: data = data[os.write(4, data):]
    os._exit(0)

def spawn():
    "A job process forked ahead of its job (the fork overlaps the parent's work between calls)."
    r_job, w_job = os.pipe()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0: job_process(r_job, w)
    os.close(r_job); os.close(w)
    return pid, w_job, r

def reply_of(buf):
    "The job's result from the bytes of its pipe, or None unless they are exactly one well-formed reply."
    if len(buf) < 8 or struct.unpack(">Q", buf[:8])[0] != len(buf) - 8: return None
    try: res = json.loads(bytes(buf[8:]))
    except (ValueError, RecursionError): return None
    if type(res) is not dict or set(res) != set(FIELDS): return None
    if not all(t is None or type(res[k]) in t for k, t in FIELDS.items()): return None
    return res

def clear_workdir():
    "Remove what earlier jobs left in the work directory."
    for entry in os.scandir(WORK):
        try:
            if entry.is_dir(follow_symlinks=False): shutil.rmtree(entry.path, ignore_errors=True)
            else: os.unlink(entry.path)
        except OSError: pass

def reap(pid, deadline):
    "Wait for the job process until `deadline`: its status and CPU seconds, or (None, 0.0)."
    try: fd = os.pidfd_open(pid)
    except (AttributeError, OSError): fd = None
    try:
        while True:
            done, st, usage = os.wait4(pid, os.WNOHANG)
            if done: return st, usage.ru_utime + usage.ru_stime
            left = deadline - time.monotonic()
            if left <= 0: return None, 0.0
            if fd is not None: select.select([fd], [], [], left)
            else: time.sleep(0.0005)
    finally:
        if fd is not None: os.close(fd)

def kill_and_reap(pid):
    for kill in (os.killpg, os.kill):   # the group too: anything it left behind, where fork was not blocked
        try: kill(pid, signal.SIGKILL)
        except OSError: pass
    return os.wait4(pid, 0)[1]

SPARE = None
def run_forked(job):
    global SPARE
    clear_workdir()
    pid, w_job, r = SPARE or spawn()
    SPARE = None
    deadline, buf = time.monotonic() + job["timeout_s"] + settings["grace_s"], bytearray()
    try:
        data = json.dumps(job).encode()
        while data: data = data[os.write(w_job, data):]
    except OSError: pass
    os.close(w_job)
    try:
        while len(buf) <= MAX_REPLY:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]: break
            chunk = os.read(r, 1 << 20)
            if not chunk: break
            buf += chunk
        status, cpu = reap(pid, deadline) if len(buf) <= MAX_REPLY else (None, 0.0)   # the reply is in: it is exiting
    finally:
        os.close(r)
    if status is None:
        kill_and_reap(pid)
        if len(buf) > MAX_REPLY: return failure("ProtocolError", f"the job's reply exceeded {settings['max_reply_mb']} MB")
        return failure("Timeout", f"no answer within {job['timeout_s']} s (+{settings['grace_s']} s grace); the job process was killed")
    try: os.killpg(pid, signal.SIGKILL)
    except OSError: pass
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGXCPU, signal.SIGKILL) and cpu >= job["timeout_s"]:
            return failure("Timeout", f"the job process ran past its CPU limit and was killed by {signal.Signals(sig).name}")
        return failure("Crashed", f"the sandbox worker killed by {signal.Signals(sig).name}")
    code = os.WEXITSTATUS(status)
    res = reply_of(buf) if code == 0 else None
    if res is not None: return res
    if not buf: return failure("Crashed", f"the sandbox worker exited with status {code}")
    return failure("ProtocolError", f"the job process wrote something other than one reply ({len(buf)} bytes) and exited with status {code}")

# ==== part: main: start-up: the limits and layers asked for, then jobs until the parent closes the pipe
layers = {"namespaces": bool(settings["namespaces"]), "capabilities_dropped": False, "landlock": 0, "seccomp": False}
try:
    mem = settings["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (settings["max_file_mb"] * 1024 * 1024,) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises OSError instead of killing the worker
    if settings["os_layers"]:
        prctl(38, 1)                                 # PR_SET_NO_NEW_PRIVS: required by Landlock and seccomp
        drop_capabilities(); layers["capabilities_dropped"] = True
        if settings["landlock_abi"] >= 1:
            landlock(settings["landlock_abi"], settings["read_paths"]); layers["landlock"] = settings["landlock_abi"]
        install_seccomp(WORKER_DENY if settings["fork_per_job"] else WORKER_DENY + JOB_DENY,
                        None if settings["fork_per_job"] else os.getpid())
        layers["seccomp"] = True
    sys.setrecursionlimit(settings["recursion_limit"])
    for name in ("ctypes", "ctypes._endian", "_ctypes"): sys.modules.pop(name, None)   # the program must import them anew

except Exception as e:  # the parent refuses to go on without the layers it asked for
    proto_out.write(json.dumps({"ready": False, "error": f"{type(e).__name__}: {e}", "layers": layers}) + "\n"); proto_out.flush()
    sys.exit(1)
if not settings["fork_per_job"]: python_policy()
proto_out.write(json.dumps({"ready": True, "layers": layers}) + "\n"); proto_out.flush()
for line in proto_in:
    job = json.loads(line)
    for name, source in (job.pop("preload", None) or {}).items():   # the kit's own modules, loaded once per worker
        if name not in sys.modules:
            module = sys.modules[name] = type(sys)(name)
            exec(compile(source, name, "exec"), module.__dict__)
            if SPARE is not None:   # forked before the module existed: let it go
                os.close(SPARE[1]); os.close(SPARE[2]); os.waitpid(SPARE[0], 0); SPARE = None
    reply = json.dumps(run_forked(job)) if settings["fork_per_job"] else encoded(run(job))
    proto_out.write(f'{{"seq": {int(job["seq"])}, "result": {reply}}}\n'); proto_out.flush()
    if settings["fork_per_job"] and SPARE is None: SPARE = spawn()
