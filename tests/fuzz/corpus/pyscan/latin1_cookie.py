# -*- coding: latin-1 -*-
import numpy as np
s = 'é'
np.zeros(1)
