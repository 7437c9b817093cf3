# samples every silt process whose exe is under a given dir: RSS, threads named rdk:broker*
import os, sys, time, json
exe_dir = sys.argv[1]; out = open(sys.argv[2], 'a'); dur = float(sys.argv[3])
t0 = time.time()
while time.time() - t0 < dur:
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try:
            exe = os.readlink(f'/proc/{pid}/exe')
        except OSError: continue
        if not exe.startswith(exe_dir): continue
        try:
            st = open(f'/proc/{pid}/status').read()
            rss = int([l for l in st.splitlines() if l.startswith('VmRSS')][0].split()[1])
            names = []
            for tid in os.listdir(f'/proc/{pid}/task'):
                try: names.append(open(f'/proc/{pid}/task/{tid}/comm').read().strip())
                except OSError: pass
            brokers = sum(1 for n in names if n.startswith('rdk:broker') and 'GroupCoord' not in n)
            out.write(json.dumps({'t': round(time.time()-t0,1), 'pid': int(pid), 'rss_kb': rss, 'threads': len(names), 'rdk_broker': brokers, 'rdk_main': sum(1 for n in names if n=='rdk:main')})+'\n')
        except (OSError, IndexError): pass
    out.flush(); time.sleep(1)
