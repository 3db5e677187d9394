"""Figure of the user guide: one group of the fused network, and the flat buffer.

Drawn at build time by matplotlib's ``plot`` directive, so no image is
committed.
"""

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

WIDTHS = (3, 5, 4)  # three models of one depth, padded to the widest (5)
PADDED = max(WIDTHS)
COLORS = ("tab:blue", "tab:orange", "tab:green")
UNIT = 0.42  # drawing units per hidden unit


def block(ax, x, y, w, h, color, **kwargs):
    ax.add_patch(
        Rectangle((x, y), w, h, facecolor=color, edgecolor="black", linewidth=0.8, **kwargs)
    )


def models_as_columns(ax, x, y, height):
    """One column block per model: real units coloured, padding hatched."""
    for g, (width, color) in enumerate(zip(WIDTHS, COLORS)):
        left = x + g * PADDED * UNIT
        block(ax, left, y, width * UNIT, height, color, alpha=0.8)
        if width < PADDED:
            block(ax, left + width * UNIT, y, (PADDED - width) * UNIT, height, "white",
                  hatch="///")
    return x + len(WIDTHS) * PADDED * UNIT


fig, ax = plt.subplots(figsize=(9, 4.6), layout="constrained")
# first layer: X (shared, stride-0 over the models) @ W0, ONE baddbmm for the group
block(ax, 0, 4.5, 1.6, 3.5, "lightgrey")
ax.text(0.8, 8.25, "X\n(batch, features)", ha="center", va="bottom", fontsize=9)
ax.text(2.0, 6.25, "@", ha="center", va="center", fontsize=14)
right = models_as_columns(ax, 2.4, 5.45, 1.6)
ax.text((2.4 + right) / 2, 7.3, "W0  (G, features, w1)\none baddbmm, X shared (no copy)",
        ha="center", va="bottom", fontsize=9)
ax.text((2.4 + right) / 2, 5.2,
        f"{len(WIDTHS)} models of widths {WIDTHS},\npadded to {PADDED} (hatched)",
        ha="center", va="top", fontsize=9)
ax.text(right + 0.4, 6.25, "=", ha="center", va="center", fontsize=14)
end = models_as_columns(ax, right + 0.8, 4.5, 3.5)
ax.text((right + 0.8 + end) / 2, 8.25, "hidden units (G, batch, w1)\npadding stays exactly 0",
        ha="center", va="bottom", fontsize=9)
# deeper layers: one batched matmul over the group, one matrix per model
ax.annotate("", xy=(end + 1.4, 6.25), xytext=(end + 0.2, 6.25),
            arrowprops=dict(arrowstyle="->", linewidth=1.2))
for g, color in reversed(list(enumerate(COLORS))):
    block(ax, end + 1.6 + 0.35 * g, 5.0 + 0.35 * g, 2.0, 2.0, color, alpha=0.9)
ax.text(end + 2.95, 8.25, "layer l ≥ 1: one baddbmm\nweights (G, w_l, w_l+1)",
        ha="center", va="bottom", fontsize=9)
# every parameter is a view into one flat buffer
total = end + 4.4
offset = 0.0
for width, color in zip(WIDTHS, COLORS):
    for share, alpha in ((0.7, 0.85), (0.3, 0.45)):  # weights, then biases
        size = share * total / len(WIDTHS)
        block(ax, offset, 1.2, size, 0.9, color, alpha=alpha)
        offset += size
ax.text(total / 2, 0.75, "all parameters: views into ONE flat buffer; the fused Adam / SGD "
        "step updates every model\nwith its own learning rate and L2 penalty (a stopped model "
        "is left out)",
        ha="center", va="top", fontsize=9)
ax.text(total / 2, 2.35, "flat parameter buffer", ha="center", va="bottom", fontsize=9)
ax.set(xlim=(-0.3, total + 0.3), ylim=(-0.6, 9.6))
ax.set_axis_off()
