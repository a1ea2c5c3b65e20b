/**
 * Style properties set on an element through the CSS object model, never
 * through its `style` attribute, so a page whose Content-Security-Policy
 * forbids inline styles shows the elements as they are meant to look
 * (Lit's `styleMap` writes the attribute on its first render).
 * @module
 */
import { nothing } from 'lit';
import { ConfigurationError } from '../../core/errors.js';
import { Directive, directive, PartType, type ElementPart, type PartInfo } from 'lit/directive.js';

class StyleProps extends Directive {
  /** What is set now: a property is written only when it changes (a write restyles the element). */
  #set = new Map<string, string>();

  constructor(part: PartInfo) {
    super(part);
    if (part.type !== PartType.ELEMENT) throw new ConfigurationError('styleProps() goes on an element: <div ${styleProps({...})}>');
  }

  render(_props: Readonly<Record<string, string | undefined>>): typeof nothing {
    return nothing;
  }

  override update(part: ElementPart, [props]: [Readonly<Record<string, string | undefined>>]): typeof nothing {
    const style = (part.element as HTMLElement).style;
    for (const name of this.#set.keys()) {
      if (props[name] === undefined) {
        style.removeProperty(name);
        this.#set.delete(name);
      }
    }
    for (const [name, value] of Object.entries(props)) {
      if (value === undefined || this.#set.get(name) === value) continue;
      style.setProperty(name, value);
      this.#set.set(name, value);
    }
    return nothing;
  }
}

/** Set CSS properties (custom properties included, by their `--name`) on the element: `<div ${styleProps({ height: '10px' })}>`. */
export const styleProps = directive(StyleProps);
