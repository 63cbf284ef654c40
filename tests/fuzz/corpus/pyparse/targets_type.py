x = *a, b
for x in *a, b: pass
for row, (e) in x: pass
type(dtype)()
type, val = f(x)
type(self)._v(self, freq)
