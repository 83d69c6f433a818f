/**
 * A free loopback port for a server a test starts, stops and starts again on the same port, taken below the
 * range the system hands out by itself, so nothing else is given it while the server is down.
 */
export declare function freePort(): Promise<number>;
