from numpy import *
from scipy.optimize import *
minimize(f, x0)
nanpercentile(a, 3)
import networkx as nx
G=nx.Graph()
nx.pagerank(G, dangling={1:1})
