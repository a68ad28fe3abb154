/** The two sizes verification looks at the app in, and each screenshot's size. */
export const DESKTOP = { width: 1280, height: 800 } as const;
export const MOBILE = { width: 390, height: 844 } as const;

/** How long the clip runs after load; the page is watched for errors over the same time. */
export const CLIP_SECONDS = 4;
