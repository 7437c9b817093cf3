# SIGSTOP every silt process under the given dirs for `secs`, at each of the given offsets
# (seconds after the first silt process under the dirs is seen); logs what it did.
import os, sys, time, signal
dirs = sys.argv[1].split(','); offsets = [float(x) for x in sys.argv[2].split(',')]; secs = float(sys.argv[3])
def pids():
    out = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try: exe = os.readlink(f'/proc/{pid}/exe')
        except OSError: continue
        if any(exe.startswith(d) for d in dirs) and open(f'/proc/{pid}/cmdline','rb').read().split(b'\0')[1:2] == [b'run']:
            out.append(int(pid))
    return out
while len(pids()) < len(dirs): time.sleep(0.2)
t0 = time.time(); print('seen', pids(), time.strftime('%H:%M:%S'), flush=True)
for off in offsets:
    while time.time() - t0 < off: time.sleep(0.1)
    ps = pids()
    for p in ps: os.kill(p, signal.SIGSTOP)
    print('stop', ps, time.strftime('%H:%M:%S'), flush=True)
    time.sleep(secs)
    for p in ps: os.kill(p, signal.SIGCONT)
    print('cont', ps, time.strftime('%H:%M:%S'), flush=True)
