/** `flagops/sdk`: the SDK, re-exported from its own package, @flagops/sdk. */
export * from '@flagops/sdk';
