/**
 * A virtualised list for Lit elements, on `@tanstack/virtual-core`: only
 * the rows on screen (and a few around) are in the DOM, rows are measured
 * as they render, and the list stays at its end while new rows arrive if
 * the reader is at the end, and stays put if the reader scrolled up.
 * @module
 */
import { Virtualizer, elementScroll, measureElement, observeElementOffset, observeElementRect, type VirtualItem } from '@tanstack/virtual-core';
import type { ReactiveController, ReactiveControllerHost } from 'lit';

/** What the list needs from its host. */
export interface VirtualListOptions {
  /** How many rows there are now. */
  count: () => number;
  /** The key of row `index` (stable across updates). */
  key: (index: number) => string;
  /** The element that scrolls. */
  scrollElement: () => HTMLElement | null;
  /** A first guess of a row's height. Default: 96. */
  estimate?: number;
}

/** A controller that keeps a virtualiser in step with its host's renders. */
export class VirtualList implements ReactiveController {
  readonly virtualizer: Virtualizer<HTMLElement, HTMLElement>;
  #cleanup: (() => void) | undefined;
  /** Rows measured so far and their total height: unmeasured rows are guessed at the mean. */
  #measured = 0;
  #height = 0;
  readonly #measure = (element: HTMLElement, entry: ResizeObserverEntry | undefined, instance: Virtualizer<HTMLElement, HTMLElement>): number => {
    // A row just drawn is not measured on the spot (that would lay the page out in the middle of a
    // render): its size so far stands until the resize observer reports it, after the browser's own layout.
    if (entry === undefined) {
      const index = instance.indexFromElement(element);
      return instance.itemSizeCache.get(instance.options.getItemKey(index)) ?? this.#estimate();
    }
    const size = measureElement(element, entry, instance);
    if (this.#measured < 10_000) {
      this.#measured++;
      this.#height += size;
    }
    return size;
  };
  // Stable functions: the virtualiser keeps its layout while they stay the same.
  readonly #key = (index: number): string => this.options.key(index);
  readonly #changed = (): void => this.host.requestUpdate();
  readonly #estimate = (): number => (this.#measured === 0 ? (this.options.estimate ?? 96) : Math.round(this.#height / this.#measured));

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: VirtualListOptions,
  ) {
    host.addController(this);
    this.virtualizer = new Virtualizer<HTMLElement, HTMLElement>(this.#settings());
  }

  #settings() {
    return {
      count: this.options.count(),
      getScrollElement: this.options.scrollElement,
      estimateSize: this.#estimate,
      getItemKey: this.#key,
      scrollToFn: elementScroll,
      observeElementRect,
      observeElementOffset,
      measureElement: this.#measure,
      overscan: 4,
      anchorTo: 'end' as const,
      followOnAppend: true,
      scrollEndThreshold: 48,
      onChange: this.#changed,
    };
  }

  hostConnected(): void {
    this.#cleanup ??= this.virtualizer._didMount();
  }

  hostUpdate(): void {
    this.virtualizer.setOptions({ ...this.virtualizer.options, ...this.#settings() });
  }

  hostUpdated(): void {
    this.virtualizer._willUpdate();
  }

  hostDisconnected(): void {
    this.#cleanup?.();
    this.#cleanup = undefined;
  }

  /** The rows to render now. */
  items(): VirtualItem[] {
    return this.virtualizer.getVirtualItems();
  }

  /** The height of the whole list. */
  size(): number {
    return this.virtualizer.getTotalSize();
  }

  /** True when the reader is at the end of the list (new rows keep it there); from what the virtualiser knows, without reading the page's layout. */
  atEnd(): boolean {
    const v = this.virtualizer;
    if (v.scrollOffset === null || !v.scrollRect) return true;
    return v.scrollOffset + v.scrollRect.height >= v.getTotalSize() - 48;
  }

  /** True while the reader scrolls (rows shown then may be drawn plainly, and richly once it stops). */
  scrolling(): boolean {
    return this.virtualizer.isScrolling;
  }
}
