"""Greedy non-maximum suppression written as a Python loop over CUDA tensors.

Imitates the hand-written NMS of dongdonghy/Detection-PyTorch-Notebook:chapter8/nms.py
(`while order.numel() > 0: i = order[0].item(); keep.append(i) ...`): the greedy
suppression walks the score-sorted boxes one at a time and asks the GPU about each box
with `.item()`. Here the IoU matrix of each image is computed on the GPU in one go, but
the walk then reads the suppression flag and the score of every candidate back to the
host, one scalar at a time. New code; synthetic detections with a fixed seed.
"""
import torch

torch.manual_seed(0)
dev = torch.device("cuda")

N_IMAGES = 24
N_BOXES = 2000
IOU_THR = 0.5
SCORE_THR = 0.05


def make_detections(n):
    # boxes gathered around a few objects, as a detector's raw output is
    centers = torch.rand(12, 2, device=dev) * 900 + 50
    which = torch.randint(0, 12, (n,), device=dev)
    xy = centers[which] + torch.randn(n, 2, device=dev) * 6
    wh = 60 + torch.rand(n, 2, device=dev) * 20
    boxes = torch.cat([xy - wh / 2, xy + wh / 2], dim=1)
    scores = torch.rand(n, device=dev)
    return boxes, scores


def pairwise_iou(boxes):
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    lt = torch.max(boxes[:, None, :2], boxes[None, :, :2])
    rb = torch.min(boxes[:, None, 2:], boxes[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=2)
    return inter / (area[:, None] + area[None, :] - inter)


def greedy_nms(boxes, scores):
    order = scores.argsort(descending=True)
    boxes = boxes[order]
    scores = scores[order]
    iou = pairwise_iou(boxes)
    suppressed = torch.zeros(boxes.shape[0], dtype=torch.bool, device=dev)
    keep = []
    for i in range(boxes.shape[0]):
        if scores[i].item() < SCORE_THR:
            break
        if suppressed[i].item():
            continue
        keep.append(i)
        suppressed |= iou[i] > IOU_THR
    return order[torch.tensor(keep, device=dev)]


def main():
    kept_total = 0
    for _ in range(N_IMAGES):
        boxes, scores = make_detections(N_BOXES)
        keep = greedy_nms(boxes, scores)
        kept_total += keep.numel()
    print("images", N_IMAGES, "boxes kept", kept_total)


if __name__ == "__main__":
    main()
