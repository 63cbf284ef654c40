f(*a.b)
f(*a[0])
[*a.b]
(*a.b, c)
{*a.b}
x = *a.b, c
f(*a())
[*a]
f(*a, *b.c)
[*a()]
