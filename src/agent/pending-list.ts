import type { UserMessage } from '../session/message.js'

/**
 * One ordered list: an array with a head offset, so deleting from the front (a claim) costs only
 * the deleted items, and a cached frozen view invalidated on change.
 *
 * @internal
 */
export class PendingList {
  #items: UserMessage[] = []
  #head = 0
  #view: readonly UserMessage[] | undefined

  /** How many messages are pending. */
  get length(): number {
    return this.#items.length - this.#head
  }

  /**
   * The pending messages, oldest first.
   *
   * @returns a frozen array, the same one until the list changes
   */
  view(): readonly UserMessage[] {
    this.#view ??= Object.freeze(this.#items.slice(this.#head))
    return this.#view
  }

  /**
   * The position of the first message with this id.
   *
   * @param id - a message id
   * @returns its index, or `-1`
   */
  indexOf(id: string): number {
    for (let index = this.#head; index < this.#items.length; index++) {
      if ((this.#items[index] as UserMessage).id === id) return index - this.#head
    }
    return -1
  }

  /**
   * Splices at normalized coordinates (a start within the list, a count within what follows it).
   *
   * @param start - the position
   * @param deleteCount - how many to remove
   * @param inserted - what to insert there
   * @returns the removed messages
   */
  splice(start: number, deleteCount: number, inserted: readonly UserMessage[]): UserMessage[] {
    if (deleteCount === 0 && inserted.length === 0) return []
    this.#view = undefined
    if (start === this.length && deleteCount === 0) {
      for (const message of inserted) this.#items.push(message)
      return []
    }
    if (start === 0 && inserted.length === 0) {
      const removed = this.#items.slice(this.#head, this.#head + deleteCount)
      this.#head += deleteCount
      this.#compact()
      return removed
    }
    return this.#items.splice(this.#head + start, deleteCount, ...inserted)
  }

  #compact(): void {
    if (this.#head === this.#items.length) {
      this.#items = []
      this.#head = 0
    } else if (this.#head >= 64 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
  }
}
