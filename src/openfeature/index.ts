/** OpenFeature for Node (`flagops/openfeature`): the server provider. The web provider is `flagops/openfeature/web`. */
export { toFlagopsContext } from './context.js';
export { FlagopsProvider, type FlagopsProviderOptions } from './server-provider.js';
