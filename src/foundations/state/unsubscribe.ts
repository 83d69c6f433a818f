/**
 * Stops a listener added with `onChange`. A store calls such a listener when its records may have been changed
 * elsewhere (another instance sharing the state), never for what was written through the store itself: the
 * listener reads what it needs again. Several changes may be announced once; an announcement is a hint to read,
 * not the change itself.
 */
export type Unsubscribe = () => void;
