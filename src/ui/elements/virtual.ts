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
      estimateSize: () => this.options.estimate ?? 96,
      getItemKey: (index: number) => this.options.key(index),
      scrollToFn: elementScroll,
      observeElementRect,
      observeElementOffset,
      measureElement,
      overscan: 6,
      anchorTo: 'end' as const,
      followOnAppend: true,
      scrollEndThreshold: 48,
      onChange: () => this.host.requestUpdate(),
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

  /** True when the reader is at the end of the list (new rows keep it there). */
  atEnd(): boolean {
    return this.virtualizer.isAtEnd(48);
  }
}
