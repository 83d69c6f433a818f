/** `flagops/openfeature`: the OpenFeature server provider, re-exported from its own package, @flagops/openfeature. */
export * from '@flagops/openfeature';
