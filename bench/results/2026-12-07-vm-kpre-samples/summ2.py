import json, sys, statistics
tmax = float(sys.argv[1])
for path in sys.argv[2:]:
    rows=[json.loads(l) for l in open(path)]
    rows=[r for r in rows if r['t'] <= tmax]
    # from the engine's start (first sample) on
    t0=rows[0]['t']; span=rows[-1]['t']-t0
    rss=[r['rss_kb']/1024 for r in rows]
    q=lambda a,b:[r['rss_kb']/1024 for r in rows if t0+a*span<=r['t']-0<t0+b*span]
    two=sum(r['rdk_main']>=2 for r in rows)
    print(path.split('/')[-1], 'samples', len(rows), 'span %.0f s' % span, 'median %.0f mean %.0f max %.0f' % (statistics.median(rss), statistics.mean(rss), max(rss)),
          'Q2 max %.0f Q4 max %.0f' % (max(q(0.25,0.5)), max(q(0.75,1.01))), 'two-client', two)
