/** `flagops/sdk/browser`: the SDK's prebuilt browser bundle, re-exported from @flagops/sdk/browser. */
export * from '@flagops/sdk/browser';
