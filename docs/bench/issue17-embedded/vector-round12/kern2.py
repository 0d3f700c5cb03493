import time, numpy as np, simsimd, numkong
from threadpoolctl import threadpool_limits
threadpool_limits(1, "blas")
rng=np.random.default_rng(0)
m=rng.standard_normal((20000,512)).astype(np.float32); m/=np.linalg.norm(m,axis=1,keepdims=True)
q=m[5].copy()
def t(f, n=30):
    f(); ts=[]
    for _ in range(n):
        a=time.perf_counter(); f(); ts.append(time.perf_counter()-a)
    return f"{np.median(ts)*1e3:.3f} ms"
m8=np.round(m*127/np.abs(m).max(1,keepdims=True)).astype(np.int8); q8=np.round(q*127/np.abs(q).max()).astype(np.int8)
ref = m8.astype(np.int64) @ q8.astype(np.int64)
print("f32 blas", t(lambda: m@q))
for name, mod in (("simsimd", simsimd), ("numkong", numkong)):
    try:
        r = np.asarray(mod.cdist(q8[None], m8, metric="dot"))
        print(name, "cdist i8 dot", r.dtype, r.shape, "exact" if np.array_equal(r.ravel().astype(np.int64), ref) else "NOT exact", t(lambda: mod.cdist(q8[None], m8, metric="dot")))
    except Exception as e: print(name, "cdist err", e)
m16=m.astype(np.float16); q16=q.astype(np.float16)
for name, mod in (("simsimd", simsimd), ("numkong", numkong)):
    try:
        print(name, "cdist f16 dot", t(lambda: mod.cdist(q16[None], m16, metric="dot")))
    except Exception as e: print(name, "f16 err", e)
# numkong packed
try:
    pk = numkong.dots_pack(m8)
    r = np.asarray(numkong.dots_packed(q8[None], pk))
    print("numkong dots_packed", r.dtype, r.shape, np.array_equal(r.ravel().astype(np.int64), ref), t(lambda: numkong.dots_packed(q8[None], pk)))
except Exception as e: print("dots_packed err", repr(e))
