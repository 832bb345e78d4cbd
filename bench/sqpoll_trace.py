"""One SQPOLL fio run's ftrace, summed up (run inside the guest, by a script workload: see
bench/data/sqpoll-aa-2026-11-28.txt): the I/O span (first to last io_uring_complete), each task's run time
in it, its context switches and interrupts by name, and the longest stretches one task ran.

    echo 1 > events/{sched/sched_switch,sched/sched_wakeup,irq/irq_handler_entry,io_uring/io_uring_complete}/enable
    fio job.fio; cat trace > trace.1
    python3 bench/sqpoll_trace.py trace.1 [full]     # full: every event of the span, one a line

Times are the guest's trace clock: in instructions mode, instructions (a guest ms is 10^6 of them).
"""
import re, sys, collections
lines = open(sys.argv[1]).read().splitlines()
ev = []
pat = re.compile(r'^\s*(.{1,16}?)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+):\s+(\S+):\s*(.*)$')
for l in lines:
    m = pat.match(l)
    if m: ev.append((float(m.group(3)), m.group(1).strip(), m.group(4), m.group(5)))
comp = [e[0] for e in ev if e[2] == 'io_uring_complete']
if not comp:
    print('no completions', len(ev)); sys.exit()
t0, t1 = comp[0], comp[-1]
run = collections.Counter(); irq = collections.Counter(); sw = 0
last_t, cur = None, None
for t, comm, name, rest in ev:
    if name == 'sched_switch':
        m = re.search(r'prev_comm=(.*?) prev_pid.*next_comm=(.*?) next_pid', rest)
        if cur is not None and last_t is not None:
            a, b = max(last_t, t0), min(t, t1)
            if b > a: run[re.sub(r'\d+$', '', cur)] += b - a
        cur, last_t = m.group(2), t
        if t0 <= t <= t1: sw += 1
    elif name == 'irq_handler_entry' and t0 <= t <= t1:
        irq[re.search(r'name=(\S+)', rest).group(1)] += 1
print(f'span_ms {1e3*(t1-t0):.3f} completions {len(comp)} switches {sw}')
print('run_ms', ' '.join(f'{k}={1e3*v:.2f}' for k, v in run.most_common()))
print('irqs', dict(irq))
# the longest stretches one task ran within the span
stretches = []
last_t, cur = None, None
for t, comm, name, rest in ev:
    if name == 'sched_switch':
        m = re.search(r'prev_state=(\S+) ==> next_comm=(.*?) next_pid', rest)
        if cur is not None and t0 <= t <= t1: stretches.append((t - last_t, cur, last_t - t0, m.group(1)))
        cur, last_t = m.group(2), t
stretches.sort(reverse=True)
print('longest', ' '.join(f'{c}:{1e3*d:.2f}ms@{1e3*s:.1f}:{st}' for d, c, s, st in stretches[:6]))
if len(sys.argv) > 2:
    for t, comm, name, rest in ev:
        if t0 - 0.002 <= t <= t1 and name != 'io_uring_complete':
            print(f'{1e3*(t-t0):9.3f} {comm[:12]:12s} {name} {rest[:150]}')
