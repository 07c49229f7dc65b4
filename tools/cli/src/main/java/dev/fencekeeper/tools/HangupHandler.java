package dev.fencekeeper.tools;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Optional;

/**
 * Runs an action on SIGHUP instead of letting the JVM treat it as a request to stop, as a server is
 * expected to (a supervisor with {@code Restart=on-failure} would leave a node that exited 0 on
 * SIGHUP down). Java has no public API for signals; this uses {@code sun.misc.Signal} from the
 * JDK's {@code jdk.unsupported} module, through reflection so that the build does not depend on it.
 * Where it is missing, SIGHUP keeps the JVM's meaning. {@link #close} puts the previous handler
 * back.
 *
 * <p>A process started with SIGHUP ignored (under {@code nohup}, or by a parent that ignores it)
 * keeps it ignored: the JVM does not install a handler for a shutdown signal that was ignored when
 * it started, and reports the previous handler as {@code SIG_IGN}; {@link #receivesSignal} tells.
 */
final class HangupHandler implements AutoCloseable {
  private static final String SIGNAL = "sun.misc.Signal";
  private static final String HANDLER = "sun.misc.SignalHandler";

  private final Object signal;
  private final Object previous;
  private final Method handle;
  private final boolean receivesSignal;

  private HangupHandler(Object signal, Object previous, Method handle, boolean receivesSignal) {
    this.signal = signal;
    this.previous = previous;
    this.handle = handle;
    this.receivesSignal = receivesSignal;
  }

  /**
   * False when this process was started with SIGHUP ignored: the action then never runs, and SIGHUP
   * stays ignored.
   */
  boolean receivesSignal() {
    return receivesSignal;
  }

  /**
   * Runs {@code action} on each SIGHUP from now on; empty if this JVM cannot handle signals (the
   * signal then stops it, as before).
   */
  static Optional<HangupHandler> install(Runnable action) {
    try {
      Class<?> signalClass = Class.forName(SIGNAL);
      Class<?> handlerClass = Class.forName(HANDLER);
      Constructor<?> named = signalClass.getConstructor(String.class);
      Object hup = named.newInstance("HUP");
      Object handler =
          Proxy.newProxyInstance(
              HangupHandler.class.getClassLoader(),
              new Class<?>[] {handlerClass},
              (proxy, method, args) -> {
                if (method.getName().equals("handle")) {
                  action.run();
                  return null;
                }
                if (method.getName().equals("toString")) {
                  return "fencekeeper SIGHUP handler";
                }
                if (method.getName().equals("hashCode")) {
                  return System.identityHashCode(proxy);
                }
                if (method.getName().equals("equals")) {
                  return proxy == args[0];
                }
                return null;
              });
      Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
      Object previous = handle.invoke(null, hup, handler);
      Object ignored = handlerClass.getField("SIG_IGN").get(null);
      return Optional.of(new HangupHandler(hup, previous, handle, previous != ignored));
    } catch (ReflectiveOperationException | IllegalArgumentException | LinkageError e) {
      return Optional.empty();
    }
  }

  @Override
  public void close() {
    try {
      handle.invoke(null, signal, previous);
    } catch (IllegalAccessException | InvocationTargetException e) {
      // The JVM is going away or never let us in: nothing to put back.
    }
  }
}
