import time, numpy as np
from threadpoolctl import threadpool_limits
threadpool_limits(1, "blas")
rng=np.random.default_rng(0)
m=rng.standard_normal((20000,512)).astype(np.float32); m/=np.linalg.norm(m,axis=1,keepdims=True)
q=m[5].copy()
def t(f, n=20):
    f(); ts=[]
    for _ in range(n):
        a=time.perf_counter(); f(); ts.append(time.perf_counter()-a)
    return f"{np.median(ts)*1e3:.2f} ms"
m16=m.astype(np.float16); q16=q.astype(np.float16)
m8=np.round(m*127/np.abs(m).max(1,keepdims=True)).astype(np.int8); q8=np.round(q*127/np.abs(q).max()).astype(np.int8)
print("f32 blas", t(lambda: m@q))
print("f16 numpy", t(lambda: m16@q16, 3))
print("i8 numpy int32 acc", t(lambda: m8.astype(np.int32)@q8.astype(np.int32), 3))
print("i8 einsum", t(lambda: np.einsum('ij,j->i', m8, q8, dtype=np.int32), 3))
import faiss
print(faiss.__version__, [x for x in dir(faiss.ScalarQuantizer) if x.startswith('QT_')])
faiss.omp_set_num_threads(1)
for qt in ("QT_8bit_direct_signed", "QT_fp16", "QT_8bit"):
    idx=faiss.IndexScalarQuantizer(512, getattr(faiss.ScalarQuantizer, qt), faiss.METRIC_INNER_PRODUCT)
    idx.train(m); idx.add(m)
    for k in (50, 400):
        print(qt, k, t(lambda: idx.search(q[None], k)))
fl=faiss.IndexFlatIP(512); fl.add(m)
print("flat f32", t(lambda: fl.search(q[None], 50)))
