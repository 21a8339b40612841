#!/usr/bin/env python3
"""Compares grundy's SVG layout with Graphviz dot's on the same graph: edge crossings and area.

    tools/layout_vs_dot.py GRUNDY.svg DOT.plain

GRUNDY.svg is `grundy render --format svg`; DOT.plain is `grundy render --format dot | dot
-Tplain` (the same labels, so the same box sizes). Both are measured the same way: every
edge becomes a polyline (curves sampled), and a crossing is a pair of edges, with no end
vertex in common, whose polylines intersect. Area is the bounding box of the vertex boxes,
in units of one vertex box height squared, so pixels and inches compare. Prints one line:
`crossings=A dot_crossings=B area=C dot_area=D`. Standard library only.
"""

import re
import sys
import xml.etree.ElementTree as ET

SAMPLES = 12  # points per curve piece


def quadratic(p0, p1, p2):
    return [((1 - t) ** 2 * p0[0] + 2 * (1 - t) * t * p1[0] + t * t * p2[0],
             (1 - t) ** 2 * p0[1] + 2 * (1 - t) * t * p1[1] + t * t * p2[1])
            for t in (i / SAMPLES for i in range(1, SAMPLES + 1))]


def cubic(p0, p1, p2, p3):
    out = []
    for i in range(1, SAMPLES + 1):
        t = i / SAMPLES
        u = 1 - t
        out.append((u ** 3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t ** 3 * p3[0],
                    u ** 3 * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t ** 3 * p3[1]))
    return out


def svg_path(d):
    """Polyline of an SVG path made of M, L, Q and C commands (absolute), as grundy writes."""
    tokens = re.findall(r"[MLQC]|-?\d+(?:\.\d+)?", d)
    points, command, numbers = [], None, []

    def flush():
        nonlocal numbers
        pairs = [(numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2)]
        if command in ("M", "L"):
            points.extend(pairs)
        elif command == "Q":
            for i in range(0, len(pairs), 2):
                points.extend(quadratic(points[-1], pairs[i], pairs[i + 1]))
        elif command == "C":
            for i in range(0, len(pairs), 3):
                points.extend(cubic(points[-1], pairs[i], pairs[i + 1], pairs[i + 2]))
        numbers = []

    for token in tokens:
        if token in "MLQC":
            flush()
            command = token
        else:
            numbers.append(float(token))
    flush()
    return points


def read_grundy(path):
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.parse(path).getroot()
    boxes, edges = {}, []
    for group in root.iter("{http://www.w3.org/2000/svg}g"):
        if group.get("class") == "vertex":
            rect = group.find("s:rect", ns)
            x, y = float(rect.get("x")), float(rect.get("y"))
            boxes[group.get("data-vertex")] = (x, y, x + float(rect.get("width")), y + float(rect.get("height")))
    for element in root.iter("{http://www.w3.org/2000/svg}path"):
        if (element.get("class") or "").startswith("edge") and element.get("data-from") != element.get("data-to"):
            edges.append((element.get("data-from"), element.get("data-to"), svg_path(element.get("d"))))
    return boxes, edges


def read_plain(path):
    boxes, edges = {}, []
    for line in open(path, encoding="utf8"):
        words = re.findall(r'"[^"]*"|\S+', line)
        if not words:
            continue
        if words[0] == "node" and words[1] != "legend":
            x, y, w, h = map(float, words[2:6])
            boxes[words[1]] = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        elif words[0] == "edge" and words[1] != words[2]:
            count = int(words[3])
            control = [(float(words[4 + 2 * i]), float(words[5 + 2 * i])) for i in range(count)]
            points = [control[0]]
            for i in range(0, count - 1, 3):
                points.extend(cubic(control[i], control[i + 1], control[i + 2], control[i + 3]))
            edges.append((words[1], words[2], points))
    return boxes, edges


def segments_cross(a, b, c, d):
    def orient(p, q, r):
        value = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
        return (value > 1e-9) - (value < -1e-9)
    return (orient(a, b, c) * orient(a, b, d) < 0) and (orient(c, d, a) * orient(c, d, b) < 0)


def crossings(edges):
    count = 0
    for i in range(len(edges)):
        for j in range(i + 1, len(edges)):
            (f1, t1, p), (f2, t2, q) = edges[i], edges[j]
            if {f1, t1} & {f2, t2}:
                continue
            if any(segments_cross(p[k], p[k + 1], q[m], q[m + 1])
                   for k in range(len(p) - 1) for m in range(len(q) - 1)):
                count += 1
    return count


def area(boxes):
    heights = sorted(b[3] - b[1] for b in boxes.values())
    unit = heights[len(heights) // 2]
    width = max(b[2] for b in boxes.values()) - min(b[0] for b in boxes.values())
    height = max(b[3] for b in boxes.values()) - min(b[1] for b in boxes.values())
    return width * height / unit / unit


def main():
    ours, theirs = read_grundy(sys.argv[1]), read_plain(sys.argv[2])
    # Each distinct edge once on both sides (dot draws multi-edges apart, grundy once).
    def distinct(edges):
        seen, out = set(), []
        for edge in edges:
            if edge[:2] not in seen:
                seen.add(edge[:2])
                out.append(edge)
        return out
    a, b = distinct(ours[1]), distinct(theirs[1])
    print(f"crossings={crossings(a)} dot_crossings={crossings(b)} "
          f"area={area(ours[0]):.0f} dot_area={area(theirs[0]):.0f} edges={len(a)}")


if __name__ == "__main__":
    main()
