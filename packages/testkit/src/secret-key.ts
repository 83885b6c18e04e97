/**
 * The secret key tests give the API and scheduler configs (ERG_SECRET_KEY), so that no test
 * depends on a key file on the machine. Base64 of 32 fixed bytes; never use it outside tests.
 */
export const TEST_SECRET_KEY = Buffer.alloc(32, 0x5a).toString('base64');
