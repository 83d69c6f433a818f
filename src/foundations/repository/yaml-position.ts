import { type Document, isMap, isPair, isScalar, isSeq, type Node } from 'yaml';

/** 1-based line and column of offsets in one text; the line index is built on first use only. */
export class SourcePositions {
  private lineStarts: number[] | undefined;

  constructor(private readonly text: string) {}

  at(offset: number): { line: number; column: number } {
    if (!this.lineStarts) {
      this.lineStarts = [0];
      for (let i = this.text.indexOf('\n'); i !== -1; i = this.text.indexOf('\n', i + 1)) this.lineStarts.push(i + 1);
    }
    const starts = this.lineStarts;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid] <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - starts[low] + 1 };
  }
}

/**
 * Source offset of the node a JSON pointer names, or of its nearest existing ancestor (a missing field points
 * at the mapping that lacks it). For a field whose value is empty, the key's offset.
 */
export function offsetOfPointer(doc: Document, pointer: string): number | undefined {
  let node: unknown = doc.contents;
  let offset = (node as Node | null)?.range?.[0];
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && String(isScalar(item.key) ? item.key.value : item.key) === segment);
      if (!pair) break;
      const keyOffset = (pair.key as Node | null)?.range?.[0];
      if (pair.value === null || (pair.value as Node).range === undefined) return keyOffset ?? offset;
      next = pair.value;
    } else if (isSeq(node)) {
      next = node.items[Number(segment)];
      if (next === undefined) break;
    } else {
      break;
    }
    node = next;
    offset = (node as Node).range?.[0] ?? offset;
  }
  return offset;
}
