"""What a job leaves behind in the worker's sandbox, and its removal: processes (the jobs' pid namespace, with a
sweep of /proc as a safety net) and files (the scratch directories). A mixin of worker.Worker (its state:
pid, zygote, judge, reaper, rsock, namespace, cfg, dirty). stdlib only: this module runs inside the sandbox.
"""

import os
import select
import signal
import time

from . import jobns


def _proc_entries():
    try:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


_TICK_S = 1 / os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid):
    """(state, ppid, CPU seconds: its own and those of the children it reaped, resident bytes) of a process, or
    None when gone."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)  # raw: a buffered open() costs 4 more system calls
        try:
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
        rest = data[data.rindex(b")") + 2:].split()
        return rest[0].decode(), int(rest[1]), sum(map(int, rest[11:15])) * _TICK_S, int(rest[21]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


class Hygiene:
    def _members(self, spare):
        """{pid: _stat} of the job's processes (zombies too) but those in spare, from one pass over /proc."""
        stats = {p: s for p in _proc_entries() if p not in spare and (s := _stat(p)) is not None}
        if self.namespace:
            return stats
        # Without a pid namespace /proc shows the host: only our descendants are fair game.
        children = {}
        for p, s in stats.items():
            children.setdefault(s[1], []).append(p)
        out, todo = {}, [self.pid, self.zygote]  # the reaper's orphans died with its namespace
        while todo:
            for c in children.get(todo.pop(), ()):
                if c not in spare and c not in out:
                    out[c] = stats[c]
                    todo.append(c)
        return out

    def _scan(self):
        """(processes the job left, zombies of ours to reap) from one pass over /proc."""
        stats = self._members({self.pid, 1, self.zygote, self.judge, self.reaper})
        return ([p for p, s in stats.items() if s[0] != "Z"],
                [p for p, s in stats.items() if s[0] == "Z" and s[1] == self.pid] if self.namespace else [])

    proc_stat = staticmethod(_stat)

    def proc_cpu(self):
        """CPU seconds the job's processes have used, from /proc (where the job has no cgroup, jobcg.py): the
        candidate and every process it started (alive, a zombie, or reaped into a parent's or the reaper's
        count) and the judge, which runs the test. The test's clock (inside/clock.py) differences two readings.
        A process the kernel reaped (its parent ignores SIGCHLD) or one re-parented outside the job
        (CLONE_PARENT: the zygote's child) is missing from the sum."""
        return sum(s[2] for s in self._members({self.pid, 1, self.zygote}).values())

    def job_rss(self):
        """Bytes resident in the job's processes together: the candidate and every process it started (not the
        judge, which has its own bound). RLIMIT_AS bounds one process; a job forking max_processes children
        held that many times memory_mb (red team r28)."""
        return sum(s[3] for s in self._members({self.pid, 1, self.zygote, self.judge, self.reaper}).values())

    @staticmethod
    def _reap(zombies):
        for p in zombies:
            try:
                os.waitpid(p, os.WNOHANG)
            except ChildProcessError:
                pass

    def end_job_processes(self):
        """Every process of the job ends, as one operation of the kernel's: the reaper kills its pid namespace's
        members and answers once none is left (jobns). True when it did; False when it is gone or stuck."""
        if self.rsock is None:
            return False
        for helper in (self.zygote, self.judge):  # a stopped zygote could not reap the candidate it forked
            if helper is not None:
                try:
                    os.kill(helper, signal.SIGCONT)
                except OSError:
                    pass
        try:
            self.rsock.send(jobns.KILL)
            ready = select.select([self.rsock], [], [], jobns.WAIT_S + 1)[0]
            return bool(ready) and self.rsock.recv(16) == jobns.DONE
        except OSError:
            return False

    def sweep(self):
        """Kill every process the job left (daemons, double forks, escaped sessions); True if clean. The jobs'
        pid namespace ends them all (end_job_processes); the listing of /proc after it is a safety net for the
        helpers' own children (and the only means where the kernel refused the namespace)."""
        if self.rsock is not None and not self.end_job_processes():
            self.rsock.close()  # the reaper is gone or stuck: so must this worker be
            self.rsock = None
            self.dirty = True
            return False
        for attempt in range(400):
            victims, zombies = self._scan()
            self._reap(zombies)
            if not victims:
                return True
            for p in victims:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.0005 if attempt < 20 else 0.005)
        victims, zombies = self._scan()
        self._reap(zombies)
        return not victims

    def _tasks(self):
        """Tasks (threads) owned by our uid now: RLIMIT_NPROC counts them against the job."""
        if self.namespace:
            return len(_proc_entries()) + 4
        uid, n = os.getuid(), 0
        for p in _proc_entries():
            try:
                with open(f"/proc/{p}/status", "rb") as f:
                    fields = dict(line.split(b":", 1) for line in f.read().splitlines() if b":" in line)
                if int(fields[b"Uid"].split()[0]) == uid:
                    n += int(fields[b"Threads"])
            except (OSError, KeyError, ValueError):
                pass
        return n + 4

    def _clean_files(self):
        """Empty the scratch directories; False when something could not be removed."""
        clean = True
        for d in self.cfg["scratch"]:
            try:
                entries = os.listdir(d)
            except OSError:
                continue
            for name in entries:
                p = os.path.join(d, name)
                try:
                    os.rmdir(p)  # the common case: the job's own directory, left empty
                    continue
                except OSError:
                    pass
                try:
                    import shutil  # here: shutil loads the compression modules, which the zygote need not hold
                    if os.path.isdir(p) and not os.path.islink(p):
                        for root, dirs, _files in os.walk(p):  # programs may chmod 000 their dirs
                            for x in [root, *(os.path.join(root, k) for k in dirs)]:
                                if not os.path.islink(x):  # chmod follows links: one may name a host dir
                                    os.chmod(x, 0o700)
                        shutil.rmtree(p)
                    else:
                        os.unlink(p)
                except (OSError, RecursionError):
                    clean = False
        return clean
