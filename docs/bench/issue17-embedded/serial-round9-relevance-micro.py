"""assess_relevance alone over the pools serial-round9-capture.py recorded: thread CPU ms (median, mean, p95)
and the exact results pickled (compare the two trees with cmp)."""
import pickle, time, statistics, sys
from graphctx.retrieve import relevance as R
c = pickle.load(open('/tmp/h-rel/out/pools.pkl','rb'))
res = []; ts = []
for rnd in range(3):
    for q, p, n in c:
        t = time.thread_time(); r = R.assess_relevance(q, p, named_entities=n); ts.append((time.thread_time()-t)*1000)
        if rnd == 0: res.append((r.coverage, r.terms, r.covered, r.explain()))
print(round(statistics.median(ts),2), round(statistics.mean(ts),2), round(statistics.quantiles(ts,n=20)[18],2))
pickle.dump(res, open(sys.argv[1], 'wb'))
