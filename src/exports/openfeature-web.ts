/** `flagops/openfeature/web`: the OpenFeature web provider, re-exported from @flagops/openfeature/web. */
export * from '@flagops/openfeature/web';
