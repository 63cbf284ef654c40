"""Batch inference of a small single-stage detector over a set of images, followed by the
export of every kept detection into a list of dicts (label, score, integer box) for a
JSON report.

Imitates: muthoninduhiu/ObjectDetectionModel:prediction_results.py (iterates over the
rows of a detector's results.xyxy[0] tensor and converts each box corner with int(),
the class index with int() and keeps the score, one GPU scalar at a time, to build a
list of detection dicts).

The detector itself is a few milliseconds of GPU work per batch, but the export reads
every field of every detection back with int() / float(): six synchronizing
device-to-host copies of a single value per detection, over 100,000 of them in all,
with the GPU idle in between.
"""
import json

import torch
import torch.nn as nn

CLASS_NAMES = ["person", "bicycle", "car", "motorcycle", "bus", "truck", "traffic light",
               "stop sign", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
               "backpack", "umbrella", "handbag", "suitcase", "bottle"]
N_IMAGES = 160
BATCH = 8
SIZE = 512
STRIDE = 16
TOPK = 120


class TinyDetector(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        chans = [3, 32, 64, 128, 128]
        layers = []
        for cin, cout in zip(chans[:-1], chans[1:]):
            layers += [nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
        self.backbone = nn.Sequential(*layers)
        self.cls_head = nn.Conv2d(128, n_classes, 1)
        self.box_head = nn.Conv2d(128, 4, 1)

    def forward(self, images):
        feats = self.backbone(images)
        return self.cls_head(feats), self.box_head(feats)


def decode(cls_logits, box_deltas, topk):
    """Per image: top-k locations by best class score -> (topk, 6) rows x1 y1 x2 y2 score cls."""
    b, c, h, w = cls_logits.shape
    scores, labels = cls_logits.sigmoid().flatten(2).max(dim=1)          # (b, h*w)
    ys, xs = torch.meshgrid(torch.arange(h, device=scores.device), torch.arange(w, device=scores.device), indexing="ij")
    cx = (xs.flatten() + 0.5) * STRIDE
    cy = (ys.flatten() + 0.5) * STRIDE
    d = box_deltas.flatten(2).exp() * STRIDE                                 # (b, 4, h*w)
    boxes = torch.stack([cx - d[:, 0], cy - d[:, 1], cx + d[:, 2], cy + d[:, 3]], dim=2).clamp(0, SIZE - 1)
    top_scores, idx = scores.topk(topk, dim=1)
    top_boxes = boxes.gather(1, idx[..., None].expand(-1, -1, 4))
    top_labels = labels.gather(1, idx).float()
    return torch.cat([top_boxes, top_scores[..., None], top_labels[..., None]], dim=2)


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    model = TinyDetector(len(CLASS_NAMES)).to(device).eval()
    gen = torch.Generator(device=device).manual_seed(1)

    detections = []
    with torch.no_grad():
        for start in range(0, N_IMAGES, BATCH):
            images = torch.rand(BATCH, 3, SIZE, SIZE, device=device, generator=gen)
            cls_logits, box_deltas = model(images)
            results = decode(cls_logits, box_deltas * 0.5, TOPK)
            for i in range(BATCH):
                for bbox in results[i]:
                    label = CLASS_NAMES[int(bbox[5])]
                    score = float(bbox[4])
                    x1, y1, x2, y2 = map(int, bbox[:4])
                    detections.append({"image_id": start + i, "label": label,
                                       "score": round(score, 4), "bbox": (x1, y1, x2, y2)})

    report = json.dumps(detections)
    print("images", N_IMAGES, "detections", len(detections), "report bytes", len(report))


if __name__ == "__main__":
    main()
