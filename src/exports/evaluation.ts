/** `flagops/evaluation`: the evaluation core and model, re-exported from their own package, @flagops/core. */
export * from '@flagops/core';
