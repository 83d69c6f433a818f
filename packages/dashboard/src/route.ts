import { type EnvironmentName, isEnvironmentName } from '@flagops/core';
import type { Api } from './api.js';
import type { Live } from './live.js';
import type { SessionInfo } from './types.js';

export interface AuditFilters {
  projectId?: string;
  flagId?: string;
  environment?: string;
  action?: string;
  /** A person's or key's name, or a key prefix. */
  actor?: string;
}

/** The page's views; the URL hash names one, so reload and back work and links can be shared. */
export type View =
  | { name: 'projects' }
  | { name: 'flags'; projectId: string }
  | { name: 'segments'; projectId: string }
  | { name: 'segment'; projectId: string; key: string }
  | { name: 'flag'; flagId: string; env: EnvironmentName }
  | { name: 'flag-by-key'; projectSlug: string; key: string }
  | { name: 'audit'; filters: AuditFilters }
  | { name: 'proposals' }
  | { name: 'keys' }
  | { name: 'not-found'; hash: string };

const AUDIT_FILTERS = ['projectId', 'flagId', 'environment', 'action', 'actor'] as const;

export function parseHash(hash: string): View {
  const [pathPart, queryPart = ''] = hash.replace(/^#/, '').split('?', 2);
  const parts = pathPart.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === 'projects')) return { name: 'projects' };
  if (parts[0] === 'projects' && parts.length === 2) return { name: 'flags', projectId: parts[1] };
  if (parts[0] === 'projects' && parts[2] === 'segments' && parts.length === 3) return { name: 'segments', projectId: parts[1] };
  if (parts[0] === 'projects' && parts[2] === 'segments' && parts.length === 4)
    return { name: 'segment', projectId: parts[1], key: parts[3] };
  if (parts[0] === 'flags' && (parts.length === 2 || parts.length === 3)) {
    const env = parts[2] ?? 'prod';
    if (isEnvironmentName(env)) return { name: 'flag', flagId: parts[1], env };
  }
  if (parts[0] === 'lookup' && parts.length === 3) return { name: 'flag-by-key', projectSlug: parts[1], key: parts[2] };
  if (parts[0] === 'proposals' && parts.length === 1) return { name: 'proposals' };
  if (parts[0] === 'keys' && parts.length === 1) return { name: 'keys' };
  if (parts[0] === 'audit' && parts.length === 1) {
    const query = new URLSearchParams(queryPart);
    const filters: AuditFilters = {};
    for (const name of AUDIT_FILTERS) {
      const value = query.get(name);
      if (value) filters[name] = value;
    }
    return { name: 'audit', filters };
  }
  return { name: 'not-found', hash };
}

export function hrefOf(view: View): string {
  const seg = encodeURIComponent;
  switch (view.name) {
    case 'projects':
      return '#/projects';
    case 'flags':
      return `#/projects/${seg(view.projectId)}`;
    case 'segments':
      return `#/projects/${seg(view.projectId)}/segments`;
    case 'segment':
      return `#/projects/${seg(view.projectId)}/segments/${seg(view.key)}`;
    case 'flag':
      return `#/flags/${seg(view.flagId)}/${view.env}`;
    case 'flag-by-key':
      return `#/lookup/${seg(view.projectSlug)}/${seg(view.key)}`;
    case 'audit': {
      const query = new URLSearchParams();
      for (const name of AUDIT_FILTERS) if (view.filters[name]) query.set(name, view.filters[name]!);
      const text = query.toString();
      return text === '' ? '#/audit' : `#/audit?${text}`;
    }
    case 'proposals':
      return '#/proposals';
    case 'keys':
      return '#/keys';
    case 'not-found':
      return view.hash;
  }
}

/** What every view is given. */
export interface PageContext {
  api: Api;
  session: SessionInfo;
  /** Announcements of changes made anywhere: `ctx.live.follow(refresh)` keeps a view current. */
  live: Live;
  navigate(view: View): void;
}

/** A view on screen; `dispose` stops its live updates when another view replaces it. */
export interface Page {
  element: HTMLElement;
  /** Shown in the browser tab. */
  title: string;
  dispose?(): void;
}
