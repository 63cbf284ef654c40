import networkx as nx
from skimage import filters, segmentation, morphology
import skimage.feature
import faiss
from annoy import AnnoyIndex
import cv2

G = nx.karate_club_graph()  # expect: GPU105/nx-cugraph
pr = nx.pagerank(G, alpha=0.85)  # expect: GPU105/nx-cugraph
pr2 = nx.pagerank(G, dangling={0: 1.0})  # expect: GPU301/-
bc = nx.betweenness_centrality(G)  # expect: GPU105/nx-cugraph
bcw = nx.betweenness_centrality(G, weight="weight")  # expect: GPU301/-
comms = nx.community.louvain_communities(G, seed=1)  # expect: GPU105/nx-cugraph
m = nx.max_weight_matching(G)  # expect: GPU204/-
nx.draw(G)  # expect: GPU209/-

smooth = filters.gaussian(img, sigma=2)  # expect: GPU106/cucim
t = filters.threshold_otsu(smooth)  # expect: GPU106/cucim
labels = segmentation.watershed(-dist, markers)  # expect: GPU205/-
skel = morphology.skeletonize(mask)  # expect: GPU205/-
hog = skimage.feature.hog(img)  # expect: GPU205/-

index = faiss.IndexFlatL2(64)  # expect: GPU107/cuvs
ivf = faiss.IndexIVFFlat(index, 64, 100)  # expect: GPU107/cuvs
ann = AnnoyIndex(64, "angular")  # expect: GPU107/cuvs
lsh = faiss.IndexLSH(64, 256)  # expect: GPU207/-

blur = cv2.GaussianBlur(img, (5, 5), 0)  # expect: GPU109/cucim
frame = cv2.imread("x.png")  # expect: GPU209/-
