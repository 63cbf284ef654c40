"""Plain Python that uses no library with a GPU path: no findings."""
import os
import json
import collections


def count_words(path):
    counts = collections.Counter()
    with open(path) as fh:
        for line in fh:
            counts.update(line.split())
    return counts


def main():
    for name in os.listdir("."):
        if name.endswith(".txt"):
            print(json.dumps(count_words(name).most_common(3)))


class numpy:  # a local class named like a library is not the library
    @staticmethod
    def zeros(n):
        return [0] * n


numpy.zeros(3)
