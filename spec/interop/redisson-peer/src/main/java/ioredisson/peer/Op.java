package ioredisson.peer;

/** One operation on a target object (a lock, a bucket, the client); its result becomes the reply's value. */
@FunctionalInterface
interface Op<T> {
  Object apply(T target, Request request) throws Exception;
}
