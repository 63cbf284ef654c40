a: A[int] | None
b: int | A[int]
c: A[int] | B | C[int] | None
d: int | None | A[int]
e: A[int] | B.c
f: A[int] | (B)
g: "x" | A[int]
a: A[int] | B[int] | None
