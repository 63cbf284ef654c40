"""Lorenz-96 ensemble advanced with RK4, the NumPy model moved onto CuPy arrays as is.

Imitates: jswhit/L96:L96.py (a Lorenz-96 model class whose ``dxdt`` builds the
shifted copies in a wrap-around buffer and whose ``advance`` takes one RK4 step of a
small (members, 40) state).

The state is 16 members x 40 variables, so every array operation is a tiny kernel;
the RK4 step issues about 56 of them from Python, most of them from the tendency
expression in ``dxdt``, and the run takes 2500 steps.
"""
import numpy as np
from cupy import asarray, zeros

MEMBERS = 16
NVARS = 40
STEPS = 2500


class L96:

    def __init__(self, members=MEMBERS, n=NVARS, dt=0.05, diff_max=1.0, diff_min=1.0, F=8.0, seed=3):
        self.n = n
        self.dt = dt
        self.diff_max = diff_max
        self.diff_min = diff_min
        self.F = F
        rs = np.random.RandomState(seed)
        self.x = asarray(F + 0.1 * rs.standard_normal(size=(members, n)))
        self.blend = asarray(np.cos(np.linspace(0.0, np.pi, n)) ** 4)
        self.xwrap = zeros((members, n + 3))

    def shiftx(self):
        xwrap = self.xwrap
        xwrap[:, 2:self.n + 2] = self.x; xwrap[:, 1] = self.x[:, -1]
        xwrap[:, 0] = self.x[:, -2]; xwrap[:, -1] = self.x[:, 0]
        return xwrap[:, 0:self.n], xwrap[:, 1:self.n + 1], xwrap[:, 3:self.n + 3]

    def dxdt(self):
        xm2, xm1, xp1 = self.shiftx()
        return (xp1 - xm2) * xm1 - (self.diff_min + (self.diff_max - self.diff_min) * self.blend) * self.x + self.F

    def advance(self):
        h = self.dt
        hh = 0.5 * h
        h6 = h / 6.0
        x = self.x
        dxdt1 = self.dxdt()
        self.x = x + hh * dxdt1
        dxdt2 = self.dxdt()
        self.x = x + hh * dxdt2
        dxdt = self.dxdt()
        self.x = x + h * dxdt
        dxdt2 = 2.0 * (dxdt2 + dxdt)
        dxdt = self.dxdt()
        self.x = x + h6 * (dxdt1 + dxdt + dxdt2)


def main():
    model = L96()
    for _ in range(STEPS):
        model.advance()
    final = model.x.get()
    print('l96: %d steps, ensemble mean %.4f, spread %.4f'
          % (STEPS, final.mean(), final.std(axis=0).mean()))


if __name__ == '__main__':
    main()
