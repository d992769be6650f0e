/** Gates still shut, opened by {@link openAllGates} so that no held call outlives its test. */
const shut: (() => void)[] = []

/**
 * A promise that held storage calls wait for, and the function that lets them go.
 *
 * @returns the promise and its opener
 */
export function gate(): { readonly promise: Promise<void>; readonly open: () => void } {
  let open: () => void = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  shut.push(open)
  return { promise, open }
}

/** Opens every gate made since the last call: for an `afterEach`. */
export function openAllGates(): void {
  for (const open of shut.splice(0)) open()
}

/**
 * Waits in real time until `condition` holds; fails after five seconds.
 *
 * @param condition - checked every 5 ms
 * @param what - what is waited for, for the failure message
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
