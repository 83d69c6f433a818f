/** OpenFeature for browsers (`flagops/openfeature/web`): the web provider, evaluating locally. */
export { toFlagopsContext } from './context.js';
export { FlagopsWebProvider, type FlagopsWebProviderOptions } from './web-provider.js';
