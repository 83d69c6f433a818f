import type { Api } from './api.js';
import type { View } from './route.js';
import type { SessionInfo } from './types.js';

/** What every view is given. */
export interface PageContext {
  api: Api;
  session: SessionInfo;
  navigate(view: View): void;
}

/** A view on screen; `dispose` stops its polling when another view replaces it. */
export interface Page {
  element: HTMLElement;
  /** Shown in the browser tab. */
  title: string;
  dispose?(): void;
}
