"""Metric helper for pt_xray_acc.py (imitates adrianskrzypnik/xray-nn:utils/metrics.py)."""
import torch


def accuracy(output, target):
    with torch.no_grad():
        preds = torch.argmax(output, dim=1)
        correct = (preds == target.to(output.device)).sum().item()
        return correct / target.size(0)
